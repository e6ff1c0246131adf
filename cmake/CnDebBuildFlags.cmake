# Debian's build flags in a packaging build: a build configured with
# -DCMAKE_INSTALL_PREFIX=/usr (the one cpack -G DEB packages,
# CnCpackChecks.cmake) on a system with dpkg-buildflags compiles and links
# with what it gives, as a Debian package's build would (dh passes them to
# CMake): the hardening features (fortified libc calls, stack protector,
# relro, format checks) and, with DEB_BUILD_MAINT_OPTIONS=hardening=+all
# unless the environment sets it, bind now. lintian checks for them
# (hardening-no-fortify-functions, hardening-no-bindnow). Off with
# -DCN_DEB_BUILDFLAGS=OFF; other prefixes (scripts/build's, /usr/local)
# keep CMake's flags.
option(CN_DEB_BUILDFLAGS "In a /usr build, compile and link with dpkg-buildflags' flags" ON)
if(NOT CN_DEB_BUILDFLAGS OR NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  return()
endif()
find_program(CN_DPKG_BUILDFLAGS dpkg-buildflags)
if(NOT CN_DPKG_BUILDFLAGS)
  return()
endif()
set(cn_maint_options "$ENV{DEB_BUILD_MAINT_OPTIONS}")
if(cn_maint_options STREQUAL "")
  set(cn_maint_options hardening=+all)
endif()
# Run in the source directory: its -ffile-prefix-map maps the source path
# to ".", so the objects do not carry this machine's paths.
foreach(var CPPFLAGS CFLAGS LDFLAGS)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env DEB_BUILD_MAINT_OPTIONS=${cn_maint_options}
                          ${CN_DPKG_BUILDFLAGS} --get ${var}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE cn_deb_${var}
    OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
endforeach()
string(APPEND CMAKE_C_FLAGS " ${cn_deb_CPPFLAGS} ${cn_deb_CFLAGS}")
string(APPEND CMAKE_EXE_LINKER_FLAGS " ${cn_deb_LDFLAGS}")
string(APPEND CMAKE_SHARED_LINKER_FLAGS " ${cn_deb_LDFLAGS}")
message(STATUS "Debian packages: dpkg-buildflags (DEB_BUILD_MAINT_OPTIONS=${cn_maint_options}): "
               "${cn_deb_CPPFLAGS} ${cn_deb_CFLAGS}; ${cn_deb_LDFLAGS}")
