# Derives a DLPack 1.0-level header from the 1.3 one the build uses: minor version 0, and
# without what 1.1-1.3 added (float8/6/4 codes, the sub-byte flag, kDLTrn, the exchange API).
# Public headers must compile against it (spec/validation.md ABI-2).
file(READ "${IN}" text)
string(REGEX REPLACE "#define DLPACK_MINOR_VERSION [0-9]+" "#define DLPACK_MINOR_VERSION 0" text "${text}")
string(REGEX REPLACE "\n[ ]*kDLFloat[864]_[a-z0-9]+ = [0-9]+U,[^\n]*" "" text "${text}")
string(REGEX REPLACE "\n[ ]*kDLTrn = [0-9]+,[^\n]*" "" text "${text}")
string(REGEX REPLACE "\n#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED[^\n]*" "" text "${text}")
string(FIND "${text}" "// DLPack `__dlpack_c_exchange_api__`" cut)
if(cut GREATER 0)
  string(SUBSTRING "${text}" 0 ${cut} text)
  string(APPEND text "\n#ifdef __cplusplus\n}  // DLPACK_EXTERN_C\n#endif\n#endif  // DLPACK_DLPACK_H_\n")
endif()
file(WRITE "${OUT}" "${text}")
