# Tests of the distribution layer: halo exchanges against a gathered host copy.
kfuse_add_test(NAME dist.halo SOURCES dist/test_halo.cpp support/main.cpp RANKS 1 2 4 LABELS dist)
# The exchanges' GPU copies (a thread per cell: HaloCellCopy) on the host backend of this
# build (KFUSE_DEVICE_SCHEDULE_ON_HOST, core/box_loop.hpp; tests/CMakeLists.txt).
if(KFUSE_TEST_DEVICE_SCHEDULE_ON_HOST)
  kfuse_add_test(NAME dist.halo.device_schedule SOURCES dist/test_halo.cpp support/main.cpp
                 RANKS 1 2 LABELS dist device)
  target_compile_definitions(test_dist_halo_device_schedule PRIVATE
                             KFUSE_DEVICE_SCHEDULE_ON_HOST=1)
endif()
