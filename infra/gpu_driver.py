"""The NVIDIA driver every GPU the stack creates gets: new enough for the trainer image's CUDA.

TensorFlow 2.21's GPU build (`docker/Dockerfile.gpu`: `tensorflow/tensorflow:2.21.0-gpu`) needs
CUDA 12; a CUDA 12.x runtime runs on any driver from 525.60.13 on (NVIDIA's CUDA
Compatibility guide, "minor version compatibility"). What each place installs unless told:
  ECI (ask)   gn5i/gn6i/gn6v/gn7/gn7i/gn7e: Tesla 470 / CUDA 11.4 by default; 535 (CUDA 12.2)
              and 550 (CUDA 12.4) on request, by the pod annotation below; since 2025-03-17
              only the major version is given ("Create a GPU-accelerated ECI pod").
  ACK (ack)   the cluster version's default, which ACK changes over time; a node pool label
              pins it for the pool's new nodes ("Specify a custom GPU driver version for a
              node"; versions in "NVIDIA driver versions supported by ACK", where 550 is the
              recommended line: it fixes XID 119/120/31 faults).
The rows are in docs/cloud-evidence.md.
"""

from __future__ import annotations

# ECI pod annotation and its value: the Tesla driver line.
ECI_GPU_DRIVER_ANNOTATION = "k8s.aliyun.com/eci-gpu-driver-version"
ECI_GPU_DRIVER = "tesla=550"
# ACK node pool label and its value: a full version ACK offers.
ACK_GPU_DRIVER_LABEL = "ack.aliyun.com/nvidia-driver-version"
ACK_GPU_DRIVER = "550.144.03"
