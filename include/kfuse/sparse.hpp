// Layer umbrella: kfuse/sparse.
#pragma once
#include "kfuse/sparse/csr_matrix.hpp"
#include "kfuse/sparse/generators.hpp"
