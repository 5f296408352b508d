# Project-wide warning and sanitizer settings, applied per target with faultline_target_defaults().
function(faultline_target_defaults target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow>)
    if(FAULTLINE_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
    endif()
  endif()
endfunction()

if(FAULTLINE_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=undefined>)
  add_link_options(-fsanitize=address,undefined)
endif()

# faultline_unity_build(<target>): with FAULTLINE_FAST_BUILD, the target's .cpp files compile in
# batches of 8 per translation unit (headers parsed once per batch). Files that must compile alone
# set SKIP_UNITY_BUILD_INCLUSION (core/CMakeLists.txt).
function(faultline_unity_build target)
  if(NOT FAULTLINE_FAST_BUILD)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # In a unity file every .cpp is an included file, so a class of one .cpp holding a type of
    # that .cpp's anonymous namespace draws GCC's -Wsubobject-linkage, which it never does alone.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
  endif()
endfunction()
