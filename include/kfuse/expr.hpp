// Layer umbrella: kfuse/expr.
#pragma once
#include "kfuse/expr/literal.hpp"
#include "kfuse/expr/math.hpp"
#include "kfuse/expr/node.hpp"
#include "kfuse/expr/operation.hpp"
#include "kfuse/expr/reduction.hpp"
#include "kfuse/expr/sparse_product.hpp"
#include "kfuse/expr/terminal.hpp"
#include "kfuse/expr/where.hpp"
