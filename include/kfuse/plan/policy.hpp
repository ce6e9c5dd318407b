// Fusion policies for kfuse::fuse<Policy>(...).
#pragma once

namespace kfuse {

/// Default: statements share a kernel unless a fusion rule separates them.
struct Fused {};
/// One kernel per statement (classic expression templates).
struct PerStatement {};
/// One kernel per operation, every intermediate materialised in a
/// temporary allocated once at fuse() (an array library without fusion).
struct Unfused {};

}  // namespace kfuse
