# CPack post-build script (CPACK_POST_BUILD_SCRIPTS): make the packages
# CPack (3.25) writes what Debian expects. Every package is unpacked, fixed,
# and built again in place by dpkg-deb:
#  - A package with an ldconfig trigger gets no postinst/postrm of CPack's
#    that only run ldconfig (lintian: maintscript-calls-ldconfig).
#  - -dbgsym packages: CPack lists the debug files in DEBIAN/md5sums by their
#    absolute staging path and gives the package no doc directory; Debian's
#    point /usr/share/doc/PKG-dbgsym at the documentation of PKG, which they
#    depend on.
#  - Reproducible: CPack stamps the ar members and tar entries with the
#    time of the build and gives the ar members the build's umask.
#    dpkg-deb -b takes the ar time from SOURCE_DATE_EPOCH and clamps the
#    files' times to it; unless the environment sets it, it is the date of
#    the packages' changelog (as dpkg-buildpackage does), read by
#    dpkg-parsechangelog. Directories get 0755 and debug files 0644
#    whatever the umask, as Debian's dh_fixperms gives them.
if(NOT DEFINED ENV{SOURCE_DATE_EPOCH})
  execute_process(COMMAND dpkg-parsechangelog -l "${CPACK_CN_CHANGELOG}" -STimestamp
    OUTPUT_VARIABLE epoch OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  set(ENV{SOURCE_DATE_EPOCH} "${epoch}")
endif()
set(cn_ldconfig_only "^#!/bin/sh\n\nset -e\n\nif \\[ \"\\$1\" = \"(configure|remove)\" \\]; then\n\tldconfig\nfi\n$")

function(cn_repack deb tree)
  execute_process(COMMAND find "${tree}" -type d -exec chmod 0755 {} +
    COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND dpkg-deb --root-owner-group -b "${tree}" "${deb}"
    OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
  file(REMOVE_RECURSE "${tree}")
endfunction()

foreach(deb IN LISTS CPACK_PACKAGE_FILES)
  get_filename_component(name "${deb}" NAME)
  if(NOT name MATCHES "\\.d?deb$")
    continue() # another generator's package (cpack -G TGZ)
  endif()
  set(tree "${deb}.tree")
  file(REMOVE_RECURSE "${tree}")
  execute_process(COMMAND dpkg-deb -R "${deb}" "${tree}" COMMAND_ERROR_IS_FATAL ANY)
  if(name MATCHES "^(.+)-dbgsym_.*\\.ddeb$")
    set(main ${CMAKE_MATCH_1})
    # 0644, whatever the umask objcopy wrote them with, as dh_fixperms
    # leaves Debian's; sorted: find lists in the file system's order.
    execute_process(COMMAND find usr -type f -exec chmod 0644 {} +
      WORKING_DIRECTORY "${tree}" COMMAND_ERROR_IS_FATAL ANY)
    execute_process(COMMAND find usr -type f -print0 COMMAND env LC_ALL=C sort -z
      COMMAND xargs -0 md5sum WORKING_DIRECTORY "${tree}" OUTPUT_FILE "${tree}/DEBIAN/md5sums" COMMAND_ERROR_IS_FATAL ANY)
    file(MAKE_DIRECTORY "${tree}/usr/share/doc")
    file(CREATE_LINK ${main} "${tree}/usr/share/doc/${main}-dbgsym" SYMBOLIC)
  elseif(EXISTS "${tree}/DEBIAN/triggers")
    file(READ "${tree}/DEBIAN/triggers" triggers)
    if(triggers MATCHES "activate-noawait ldconfig")
      foreach(script postinst postrm)
        if(EXISTS "${tree}/DEBIAN/${script}")
          file(READ "${tree}/DEBIAN/${script}" text)
          if(text MATCHES "${cn_ldconfig_only}")
            file(REMOVE "${tree}/DEBIAN/${script}")
          endif()
        endif()
      endforeach()
    endif()
  endif()
  cn_repack("${deb}" "${tree}")
endforeach()
