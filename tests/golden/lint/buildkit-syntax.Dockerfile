# syntax=docker/dockerfile:1
# A Dockerfile written for trainimg's tests: syntax BuildKit accepts and
# where each finding must point (heredoc bodies, continuation lines).
ARG BASE=nvcr.io/nvidia/pytorch:26.08-py3
FROM ${BASE} AS base
ARG EFA_INSTALLER_VERSION=1.50.0 NET_PLUGIN=none
LABEL maintainer "Jane O'Neil <jane@example.org>"
MAINTAINER Jane O'Neil
ENV PIP_NO_CACHE_DIR 1

FROM base AS efa
ARG EFA_INSTALLER_VERSION
RUN --mount=type=cache,target=/root/.cache <<END-OF-INSTALL bash -ex
cd /tmp
curl -fsSL -O https://efa-installer.amazonaws.com/aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz
tar -xf aws-efa-installer-${EFA_INSTALLER_VERSION}.tar.gz && cd aws-efa-installer
./efa_installer.sh -y --skip-kmod --skip-limit-conf --no-verify
END-OF-INSTALL
ENV A=1 \
    # a comment line inside the continuation

    NCCL_NET_PLUGIN=${NET_PLUGIN:-ofi} \
    LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:${LD_LIBRARY_PATH}
ONBUILD RUN <<EOF
echo "built on top of the EFA image"
EOF
RUN echo done\\
CMD ["bash", '-l']
