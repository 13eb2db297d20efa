// vkpack's public API in one include, for programs such as examples/fashion_mnist:
//   #include <vkpack/vkpack.h>
// Everything it reaches is installed (cmake --install); headers it does not reach are
// the library's internals (op definitions, lowering, SPIR-V reflection, checksums, file
// formats) and are not.
#pragma once

// core: arrays, errors, logging, random numbers, safetensors files
#include "vkpack/core/array.h"
#include "vkpack/core/dtype.h"
#include "vkpack/core/error.h"
#include "vkpack/core/half.h"
#include "vkpack/core/log.h"
#include "vkpack/core/npz.h"
#include "vkpack/core/rng.h"
#include "vkpack/core/safetensors.h"
#include "vkpack/core/shape.h"

// dataflow: data loading
#include "vkpack/dataflow/all.h"

// engine: devices, graphs, ops, layers, optimizers, sessions
#include "vkpack/engine/graph/autodiff.h"
#include "vkpack/engine/graph/graph.h"
#include "vkpack/engine/graph/initializer.h"
#include "vkpack/engine/graph/layers.h"
#include "vkpack/engine/graph/loss_scale.h"
#include "vkpack/engine/graph/ops.h"
#include "vkpack/engine/graph/optimizer.h"
#include "vkpack/engine/graph/sequence_layers.h"
#include "vkpack/engine/graph/session.h"
#include "vkpack/engine/graph/variables.h"
#include "vkpack/engine/vk/device.h"
#include "vkpack/engine/vk/instance.h"
#include "vkpack/engine/vk/limits_profile.h"

// towers: data-parallel replication
#include "vkpack/towers/towers.h"

// callbacks and monitors
#include "vkpack/callbacks/callback.h"
#include "vkpack/callbacks/checkpoint.h"
#include "vkpack/callbacks/data_parallel_inference.h"
#include "vkpack/callbacks/inference_runner.h"
#include "vkpack/callbacks/monitors.h"
#include "vkpack/callbacks/monitors/json_writer.h"
#include "vkpack/callbacks/monitors/scalar_printer.h"
#include "vkpack/callbacks/monitors/tf_event_writer.h"
#include "vkpack/callbacks/param_setters.h"
#include "vkpack/callbacks/periodic.h"
#include "vkpack/callbacks/pictures.h"
#include "vkpack/callbacks/progress_bar.h"
#include "vkpack/callbacks/saver.h"
#include "vkpack/callbacks/summary.h"
#include "vkpack/callbacks/tensor_callbacks.h"
#include "vkpack/callbacks/trackers.h"

// the kernel layer, for programs that record command streams of their own
#include "vkpack/engine/vk/kernels/batch_norm.h"
#include "vkpack/engine/vk/kernels/cast.h"
#include "vkpack/engine/vk/kernels/conv.h"
#include "vkpack/engine/vk/kernels/copy.h"
#include "vkpack/engine/vk/kernels/elementwise.h"
#include "vkpack/engine/vk/kernels/gemm.h"
#include "vkpack/engine/vk/kernels/pool.h"
#include "vkpack/engine/vk/kernels/reduce.h"
#include "vkpack/engine/vk/kernels/softmax.h"
#include "vkpack/engine/vk/kernels/training.h"
#include "vkpack/engine/vk/memory.h"
#include "vkpack/engine/vk/recording.h"
#include "vkpack/engine/vk/transfer.h"

// train: configs, trainers, input sources, predictors (DistributedTrainer where vkpack
// was built with MPI)
#ifdef VKPACK_HAVE_MPI
#include "vkpack/train/distributed_trainer.h"
#endif
// ONNX export (where the library was built with libonnx-dev)
#ifdef VKPACK_HAVE_ONNX
#include "vkpack/train/onnx_export.h"
#endif
#include "vkpack/train/foreign_weights.h"
#include "vkpack/train/gan.h"
#include "vkpack/train/input_source.h"
#include "vkpack/train/logger_dir.h"
#include "vkpack/train/model_desc.h"
#include "vkpack/train/multi_device_trainer.h"
#include "vkpack/train/predictor.h"
#include "vkpack/train/session_init.h"
#include "vkpack/train/tower_trainer.h"
#include "vkpack/train/train_config.h"
#include "vkpack/train/trainer.h"
