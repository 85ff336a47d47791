# cmake -DINPUT=file.bc -DOUTPUT=file.inc -P EmbedBitcode.cmake
# Writes the bytes of INPUT as `static const unsigned char
# HostLibdeviceBitcode[] = {...};` for LinkHostLibdevice.cpp.
file(READ ${INPUT} Hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," Bytes "${Hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" Bytes "${Bytes}")
file(WRITE ${OUTPUT}.tmp
  "// Generated from ${INPUT} by EmbedBitcode.cmake: do not edit.\n"
  "static const unsigned char HostLibdeviceBitcode[] = {\n${Bytes}};\n")
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
