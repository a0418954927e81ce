# The API reference (target `docs`): Doxygen over the public headers. Filled in by the docs work.
