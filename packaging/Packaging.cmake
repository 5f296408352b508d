# CPack: `cpack -G DEB` in a build directory makes faultline_<version>_<arch>.deb.
set(CPACK_PACKAGE_NAME "faultline")
set(CPACK_PACKAGE_VENDOR "Faultline developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "GPU forensics workbench: find silent data corruption by replaying kernels")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Faultline developers <faultline@localhost>")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
set(CPACK_GENERATOR "DEB")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# faultline-worker links the CUDA runtime and cuBLAS when built with the CUDA target; they come
# from NVIDIA's CUDA packages, not Debian's, so dpkg-shlibdeps is told where they are and the
# package recommends rather than requires them (CPU and simulated targets need neither).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://localhost/faultline")
# Qt's offscreen/xcb platform plugins live in a separate package. The ledger's SQLite and libpq
# (core/ledger) are named too, though dpkg-shlibdeps finds them: the ledger is the user's record.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "qt6-qpa-plugins, libsqlite3-0, libpq5")
set(CPACK_STRIP_FILES ON)
include(CPack)
