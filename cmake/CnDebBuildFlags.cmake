# Debian's build flags in a packaging build: a build configured with
# -DCMAKE_INSTALL_PREFIX=/usr (the one cpack -G DEB packages,
# CnCpackChecks.cmake) on a system with dpkg-buildflags compiles and links
# with what it gives, as a Debian package's build would (dh passes them to
# CMake): the hardening features (fortified libc calls, stack protector,
# relro, format checks) and, with DEB_BUILD_MAINT_OPTIONS=hardening=+all
# unless the environment sets it, bind now. lintian checks for them
# (hardening-no-fortify-functions, hardening-no-bindnow). Off with
# -DCN_DEB_BUILDFLAGS=OFF; other prefixes (scripts/build's, /usr/local)
# keep CMake's flags. Per target, as the other settings: cn_build_flags()
# (CnBuildFlags.cmake) links cn_deb_buildflags, empty unless this fills it.
add_library(cn_deb_buildflags INTERFACE)
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
separate_arguments(cn_deb_compile UNIX_COMMAND "${cn_deb_CPPFLAGS} ${cn_deb_CFLAGS}")
separate_arguments(cn_deb_link UNIX_COMMAND "${cn_deb_LDFLAGS}")
target_compile_options(cn_deb_buildflags INTERFACE ${cn_deb_compile})
target_link_options(cn_deb_buildflags INTERFACE ${cn_deb_link})
message(STATUS "Debian packages: dpkg-buildflags (DEB_BUILD_MAINT_OPTIONS=${cn_maint_options}): "
               "${cn_deb_CPPFLAGS} ${cn_deb_CFLAGS}; ${cn_deb_LDFLAGS}")
