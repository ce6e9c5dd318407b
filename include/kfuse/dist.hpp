// Layer umbrella: kfuse/dist.
#pragma once
#include "kfuse/dist/comm.hpp"
#include "kfuse/dist/environment.hpp"
#include "kfuse/dist/ghost_import.hpp"
#include "kfuse/dist/grid.hpp"
#include "kfuse/dist/halo_exchange.hpp"
#include "kfuse/dist/row_map.hpp"
