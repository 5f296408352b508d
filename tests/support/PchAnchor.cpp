// The one source of the targets that hold the tests' precompiled headers (tests/CMakeLists.txt).
