// Layer umbrella: kfuse/io (VTK output for ParaView, checkpoint/restart).
#pragma once
#include "kfuse/io/checkpoint.hpp"
#include "kfuse/io/common.hpp"
#include "kfuse/io/vtk.hpp"
