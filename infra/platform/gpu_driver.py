"""The NVIDIA driver every GPU the stack creates gets: new enough for the trainer image's CUDA.

TensorFlow 2.21 is built with CUDA 12.5.1 (tensorflow/tensorflow `.bazelrc`,
`HERMETIC_CUDA_VERSION="12.5.1"`). A CUDA 12.x build runs on any driver from 525.60.13 on by
"minor version compatibility" (NVIDIA's CUDA Compatibility guide), but not when the image says
otherwise: an image based on nvidia/cuda:12.5 carries `NVIDIA_REQUIRE_CUDA=cuda>=12.5`, and the
NVIDIA container runtime then refuses to start it on an older driver. So:
  ACK (ack)   a node pool label pins the pool's new nodes to 570.133.20 (CUDA 12.8): at least
              the build's own CUDA, whatever the image requires ("Specify a custom GPU driver
              version for a node"; "List of NVIDIA driver versions supported by ACK").
  ECI (ask)   the pod annotation asks for the newest line ECI offers for these families,
              Tesla 550 (CUDA 12.4; 470 / CUDA 11.4 is the default); since 2025-03-17 only the
              major version is given ("Create a GPU-accelerated ECI pod"). That is below 12.5,
              so it works by minor version compatibility only, which docker/Dockerfile.gpu
              states as the image's requirement (`NVIDIA_REQUIRE_CUDA=cuda>=12.0`).
The rows are in docs/cloud-evidence.md.
"""

from __future__ import annotations

# ECI pod annotation and its value: the Tesla driver line.
ECI_GPU_DRIVER_ANNOTATION = "k8s.aliyun.com/eci-gpu-driver-version"
ECI_GPU_DRIVER = "tesla=550"
# ACK node pool label and its value: a full version ACK offers.
ACK_GPU_DRIVER_LABEL = "ack.aliyun.com/nvidia-driver-version"
ACK_GPU_DRIVER = "570.133.20"
