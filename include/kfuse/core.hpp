// Layer umbrella: kfuse/core.
#pragma once
#include "kfuse/core/box_loop.hpp"
#include "kfuse/core/config.hpp"
#include "kfuse/core/error.hpp"
#include "kfuse/core/files.hpp"
#include "kfuse/core/kernel_counter.hpp"
#include "kfuse/core/kokkos_compat.hpp"
#include "kfuse/core/prefetch.hpp"
#include "kfuse/core/sizes.hpp"
#include "kfuse/core/spaces.hpp"
#include "kfuse/core/static_for.hpp"
#include "kfuse/core/stream_store.hpp"
#include "kfuse/core/view.hpp"
