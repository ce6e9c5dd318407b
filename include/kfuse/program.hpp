// Layer umbrella: kfuse/program.
#pragma once
#include "kfuse/program/arguments.hpp"
#include "kfuse/program/binding.hpp"
#include "kfuse/program/eager.hpp"
#include "kfuse/program/explain.hpp"
#include "kfuse/program/fuse.hpp"
#include "kfuse/program/program.hpp"
