/* Prelude of docs/embedding.md's C export (the body of main()). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
