# kcm's controller-manager images: a static binary on a minimal, non-root
# base. BINARY picks the command (default kube-controller-manager):
#   docker build -t kcm/kube-controller-manager:dev .
#   docker build --build-arg BINARY=cloud-controller-manager -t kcm/cloud-controller-manager:dev .
# The image's entrypoint is the binary, under its own name in PATH (as
# kubeadm's static pods call it) and as /usr/local/bin/controller-manager.
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

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/bin/ /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/controller-manager"]
