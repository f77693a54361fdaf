# kcm's controller-manager images: a static binary on distroless static.
# BINARY picks the command (default kube-controller-manager):
#   docker build -t kcm/kube-controller-manager:dev .
#   docker build --build-arg BINARY=cloud-controller-manager -t kcm/cloud-controller-manager:dev .
# The image's entrypoint is the binary, under its own name in PATH (as
# kubeadm's static pods call it) and as /usr/local/bin/controller-manager.
#
# BASE picks the user, which the image takes from its base (no USER here).
# By default it is distroless static's root variant, so that kcm runs as
# root like upstream's registry.k8s.io/kube-controller-manager: kubeadm
# writes /etc/kubernetes/controller-manager.conf, pki/ca.key and pki/sa.key
# 0600 root:root and runs its static pods as root. The non-root variant
# (uid/gid 65532, working directory /home/nonroot) is distroless' nonroot
# tag; it can read those files only if they are made readable by 65532, or
# by the runAsUser/runAsGroup that kubeadm's RootlessControlPlane gate sets:
#   docker build --build-arg BASE=gcr.io/distroless/static-debian12:nonroot -t kcm/kube-controller-manager:dev-nonroot .
# test/node/image (KCM) builds the same image without docker;
# TestKCMMatchesDockerfile there fails when the two drift apart.
ARG BASE=gcr.io/distroless/static-debian12:latest

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd cmd
COPY pkg pkg
COPY internal internal
ARG KUBE_VERSION=v1.37.1
ARG BINARY=kube-controller-manager
RUN case "${BINARY}" in kube-controller-manager|cloud-controller-manager) ;; \
      *) echo "BINARY must be kube-controller-manager or cloud-controller-manager, not ${BINARY}" >&2; exit 1 ;; esac && \
    mkdir -p /out/bin && \
    CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=${KUBE_VERSION}-kcm -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37" \
      -o /out/bin/${BINARY} ./cmd/${BINARY} && \
    ln -s ${BINARY} /out/bin/controller-manager

FROM ${BASE}
COPY --from=build /out/bin/ /usr/local/bin/
ENTRYPOINT ["/usr/local/bin/controller-manager"]
