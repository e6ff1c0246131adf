# CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS): strip what CPack (3.25)
# installed into its staging directory the way Debian's dh_strip does,
# before the DEB generator splits the debug symbols into the -dbgsym
# packages (objcopy --only-keep-debug, --strip-unneeded; that split leaves
# .comment and .note, and does not touch static libraries):
#  - executables and shared libraries: no .comment or .note section
#    (lintian: binary-has-unneeded-section);
#  - static libraries: no debug sections either, with deterministic archive
#    headers (lintian: unstripped-static-library).
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
file(GLOB_RECURSE cn_staged LIST_DIRECTORIES false "${CPACK_TEMPORARY_DIRECTORY}/*")
foreach(f IN LISTS cn_staged)
  if(IS_SYMLINK "${f}")
    continue()
  endif()
  file(READ "${f}" magic LIMIT 8 HEX)
  if(magic MATCHES "^7f454c46") # \x7fELF
    # objcopy, not strip: strip would drop the symbols and debug sections
    # too (its default is --strip-all) and leave nothing to split.
    set(cmd "${CPACK_CN_OBJCOPY}" --remove-section=.comment --remove-section=.note)
  elseif(magic STREQUAL "213c617263683e0a") # !<arch>\n
    set(cmd "${CPACK_CN_STRIP}" --strip-debug --remove-section=.comment --remove-section=.note
      --enable-deterministic-archives)
  else()
    continue()
  endif()
  execute_process(COMMAND ${cmd} "${f}" COMMAND_ERROR_IS_FATAL ANY)
endforeach()
