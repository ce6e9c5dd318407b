# Tests of the plan layer: fusion rules and figures as static_asserts, explain() text.
kfuse_add_test(NAME plan.plan SOURCES plan/test_plan.cpp support/main.cpp LABELS plan)
