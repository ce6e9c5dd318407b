// Layer umbrella: kfuse/plan.
#pragma once
#include "kfuse/plan/access.hpp"
#include "kfuse/plan/describe.hpp"
#include "kfuse/plan/plan.hpp"
#include "kfuse/plan/policy.hpp"
#include "kfuse/plan/statement.hpp"
#include "kfuse/plan/unfused.hpp"
