// Layer umbrella: kfuse/array.
#pragma once
#include "kfuse/array/array.hpp"
#include "kfuse/array/scalar.hpp"
#include "kfuse/array/vector.hpp"
