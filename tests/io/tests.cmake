# io tests (VTK output, checkpoint/restart). Included by tests/CMakeLists.txt.
kfuse_add_test(NAME io.checkpoint SOURCES io/test_checkpoint.cpp support/main.cpp RANKS 1 2 4 LABELS io)
kfuse_add_test(NAME io.vtk SOURCES io/test_vtk.cpp support/main.cpp RANKS 1 2 4 LABELS io)

# Restart at another rank count: the np4 run writes the checkpoint (a fixture), the np2
# and np1 runs read it. Without MPI the one test writes and reads its own file.
kfuse_add_test(NAME io.restart SOURCES io/test_restart.cpp support/main.cpp RANKS 4 2 1 LABELS io)
if(KFUSE_ENABLE_MPI)
  set(_kfuse_restart_file "${CMAKE_CURRENT_BINARY_DIR}/work/io.restart.ckpt")
  foreach(ranks IN ITEMS 4 2 1)
    set(_kfuse_role read)
    if(ranks EQUAL 4)
      set(_kfuse_role write)
    endif()
    get_test_property(io.restart.np${ranks} ENVIRONMENT _kfuse_environment)
    set_tests_properties(io.restart.np${ranks} PROPERTIES ENVIRONMENT
      "${_kfuse_environment};KFUSE_RESTART_ROLE=${_kfuse_role};KFUSE_RESTART_FILE=${_kfuse_restart_file}")
  endforeach()
  set_tests_properties(io.restart.np4 PROPERTIES FIXTURES_SETUP io.restart)
  set_tests_properties(io.restart.np2 io.restart.np1 PROPERTIES FIXTURES_REQUIRED io.restart)
endif()

# Fault injection: a save killed mid-write leaves the previous checkpoint loadable, and the
# next save leaves no temporary file (2 ranks with MPI).
add_executable(checkpoint_tool io/checkpoint_tool.cpp)
target_link_libraries(checkpoint_tool PRIVATE kfuse::kfuse kfuse_warnings kfuse_sanitizers)
set(_kfuse_launcher "")
if(KFUSE_ENABLE_MPI)
  set(_kfuse_launcher "${MPIEXEC_EXECUTABLE}" ${MPIEXEC_NUMPROC_FLAG} 2 ${KFUSE_MPIEXEC_FLAGS})
endif()
kfuse_add_script_test(NAME io.checkpoint_killed SCRIPT io/checkpoint_killed.sh
                      ARGS $<TARGET_FILE:checkpoint_tool> ${_kfuse_launcher} TIMEOUT 180 LABELS io)
