// Layer umbrella: kfuse/exec.
#pragma once
#include "kfuse/exec/exchange.hpp"
#include "kfuse/exec/group.hpp"
#include "kfuse/exec/kernel.hpp"
#include "kfuse/exec/lower.hpp"
#include "kfuse/exec/space.hpp"
