// vkpack's public API in one include, for programs such as examples/fashion_mnist:
//   #include <vkpack/vkpack.h>
// Everything it reaches is installed (cmake --install); headers it does not reach are
// the library's internals (op definitions, lowering, SPIR-V reflection, checksums, file
// formats) and are not.
#pragma once

// core: arrays, errors, logging, random numbers, safetensors files
#include "core/array.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/half.h"
#include "core/log.h"
#include "core/npz.h"
#include "core/rng.h"
#include "core/safetensors.h"
#include "core/shape.h"

// dataflow: data loading
#include "dataflow/all.h"

// engine: devices, graphs, ops, layers, optimizers, sessions
#include "engine/graph/autodiff.h"
#include "engine/graph/collections.h"
#include "engine/graph/grad_proc.h"
#include "engine/graph/graph.h"
#include "engine/graph/initializer.h"
#include "engine/graph/layers.h"
#include "engine/graph/linear_wrap.h"
#include "engine/graph/loss_scale.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/sequence_layers.h"
#include "engine/graph/session.h"
#include "engine/graph/variables.h"
#include "engine/vk/device.h"
#include "engine/vk/instance.h"
#include "engine/vk/limits_profile.h"

// towers: data-parallel replication
#include "towers/async_towers.h"
#include "towers/host_master.h"
#include "towers/sync_towers.h"
#include "towers/towers.h"

// callbacks and monitors
#include "callbacks/callback.h"
#include "callbacks/checkpoint.h"
#include "callbacks/concurrency.h"
#include "callbacks/data_parallel_inference.h"
#include "callbacks/inference_runner.h"
#include "callbacks/monitors.h"
#include "callbacks/monitors/json_writer.h"
#include "callbacks/monitors/scalar_printer.h"
#include "callbacks/monitors/tf_event_writer.h"
#include "callbacks/param_setters.h"
#include "callbacks/periodic.h"
#include "callbacks/pictures.h"
#include "callbacks/progress_bar.h"
#include "callbacks/saver.h"
#include "callbacks/summary.h"
#include "callbacks/tensor_callbacks.h"
#include "callbacks/trackers.h"

// the kernel layer, for programs that record command streams of their own
#include "engine/vk/kernels/batch_norm.h"
#include "engine/vk/kernels/cast.h"
#include "engine/vk/kernels/conv.h"
#include "engine/vk/kernels/copy.h"
#include "engine/vk/kernels/elementwise.h"
#include "engine/vk/kernels/gemm.h"
#include "engine/vk/kernels/pool.h"
#include "engine/vk/kernels/reduce.h"
#include "engine/vk/kernels/softmax.h"
#include "engine/vk/kernels/training.h"
#include "engine/vk/memory.h"
#include "engine/vk/recording.h"
#include "engine/vk/transfer.h"

// train: configs, trainers, input sources, predictors (DistributedTrainer where vkpack
// was built with MPI)
#ifdef VKPACK_HAVE_MPI
#include "train/distributed_trainer.h"
#endif
// ONNX export (where the library was built with libonnx-dev)
#ifdef VKPACK_HAVE_ONNX
#include "train/onnx_export.h"
#endif
#include "train/batch_split.h"
#include "train/dataset_predictor.h"
#include "train/foreign_weights.h"
#include "train/gan.h"
#include "train/input_source.h"
#include "train/logger_dir.h"
#include "train/model_desc.h"
#include "train/multi_device_trainer.h"
#include "train/multi_predictor.h"
#include "train/predictor.h"
#include "train/session_init.h"
#include "train/tower_trainer.h"
#include "train/train_config.h"
#include "train/trainer.h"
