# Every pitfall of seed 002 in one file (a test input, not a recipe to copy).
# syntax comment above is not a directive: directives must come first.
ARG BASE=nvcr.io/nvidia/pytorch:26.08-py3
FROM ubuntu:24.04 AS tools
ENV NCCL_NET_PLUGIN=none

FROM ${BASE}
ARG EFA_INSTALLER_VERSION=latest
RUN apt-get update
RUN cd /tmp \
 && curl -fsSL -O https://efa-installer.amazonaws.com/aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz \
 && tar -xf aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz \
 && cd aws-efa-installer \
 # flags only echoed do not count:
 && echo "--skip-kmod --no-verify" \
 && ./efa_installer.sh -y --skip-limit-conf --disable-ngc
ENV LD_LIBRARY_PATH=/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib:/host/lib
ENV NCCL_NET_PLUGIN="" NCCL_NET=IB NCCL_IB_HCA=mlx5
RUN apt-get update && apt-get install -y --no-install-recommends libopenmpi-dev
# trainimg: ignore=mpi-second-install
ENV OPAL_PREFIX=/opt/amazon/openmpi
ENV PATH=/opt/amazon/openmpi/bin:${PATH}
