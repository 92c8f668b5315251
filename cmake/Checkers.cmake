# Checkers.cmake - what the presets asan, tsan and valgrind add to a build.
#
# WORKBOOK_CHECKER (cache): "" (plain), asan (AddressSanitizer + UBSan),
# tsan (ThreadSanitizer; the tests run on the Criterion shim, since TSan
# cannot run Criterion), valgrind (memcheck following Criterion's workers;
# each test asks Valgrind at its end, see sim_test_end()).
set(WORKBOOK_CHECKER "" CACHE STRING "Checker the tests run under: none, asan, tsan or valgrind")
set_property(CACHE WORKBOOK_CHECKER PROPERTY STRINGS "" asan tsan valgrind)
# For the per-test CTest tests (Workbook.cmake): how much longer than its
# manifest timeout a test may take under the checker, and which tests the
# checker leaves out (CTest shows them as Disabled).
set(WORKBOOK_TIMEOUT_SCALE 1)
set(WORKBOOK_CTEST_DISABLED "")

if(WORKBOOK_CHECKER STREQUAL "asan")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  set(WORKBOOK_TIMEOUT_SCALE 2)
elseif(WORKBOOK_CHECKER STREQUAL "tsan")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  add_compile_definitions(WORKBOOK_SHIM)
  set(WORKBOOK_TIMEOUT_SCALE 3)
elseif(WORKBOOK_CHECKER STREQUAL "valgrind")
  # Valgrind 3.19 does not read clang's DWARF 5.
  add_compile_options(-gdwarf-4)
  find_program(WORKBOOK_VALGRIND valgrind REQUIRED)
  # Prefixed to every test command by add_test() (target property
  # CROSSCOMPILING_EMULATOR, initialised from this variable): memcheck with
  # the flags that follow Criterion's workers; see tools/valgrind-run.
  set(CMAKE_CROSSCOMPILING_EMULATOR "${CMAKE_SOURCE_DIR}/tools/valgrind-run")
  set(WORKBOOK_TIMEOUT_SCALE 5)
  # valgrind-run leaves these out of a whole-binary run; a per-test run names
  # its test (--filter wins), so CTest disables them instead.
  set(WORKBOOK_CTEST_DISABLED "*/parallel*")
elseif(NOT WORKBOOK_CHECKER STREQUAL "")
  message(FATAL_ERROR "WORKBOOK_CHECKER must be empty, asan, tsan or valgrind, not '${WORKBOOK_CHECKER}'")
endif()

# The test framework: Criterion, or under tsan the shim that stands in for it
# under the same imported name, so that common/ and the labs link it unchanged.
if(WORKBOOK_CHECKER STREQUAL "tsan")
  add_library(criterion_shim STATIC "${CMAKE_SOURCE_DIR}/common/src/shim/criterion_shim.c")
  target_include_directories(criterion_shim PUBLIC "${CMAKE_SOURCE_DIR}/common/include")
  target_link_libraries(criterion_shim PUBLIC Threads::Threads)
  add_library(PkgConfig::CRITERION INTERFACE IMPORTED)
  target_link_libraries(PkgConfig::CRITERION INTERFACE criterion_shim)
else()
  pkg_check_modules(CRITERION REQUIRED IMPORTED_TARGET criterion)
endif()
