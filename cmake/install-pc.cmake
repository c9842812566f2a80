# Writes busypoll.pc at install time, so its prefix is the one installed into
# (`cmake --install --prefix P` or `make install PREFIX=P`), not the one configured.
# Set by the caller (CMakeLists.txt's install(CODE)): BP_PC_IN, BP_PC_OUT,
# BP_PC_VERSION, BP_PC_LIBDIR_REL, BP_PC_INCLUDEDIR_REL (GNUInstallDirs values,
# relative or absolute). CMAKE_INSTALL_PREFIX is the install-time prefix.
set(BP_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${BP_PC_${dir}_REL}")
    set(BP_PC_${dir} "${BP_PC_${dir}_REL}")
  else()
    set(BP_PC_${dir} "\${prefix}/${BP_PC_${dir}_REL}")
  endif()
endforeach()
configure_file("${BP_PC_IN}" "${BP_PC_OUT}" @ONLY)
