# syntax=docker/dockerfile:1
# vitals's image, for those who build with Docker, from a clone:
#
#   docker build -t ghcr.io/vitals-dev/vitals:dev .
#   docker buildx build --platform linux/amd64,linux/arm64 -t ghcr.io/vitals-dev/vitals:dev .
#
# It is the image that hack/image.sh builds without a daemon (docs/image.md): the build stage lays
# out the same files with hack/image.sh --rootfs, and the final stage is those files and the same
# configuration, which hack/image/image_test.go compares. The labels that depend on the build come
# from --build-arg VERSION, REVISION and CREATED (hack/image.sh takes them from git):
#
#   docker build --build-arg VERSION="$(bash hack/version.sh)" \
#     --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg CREATED="$(date -u -d @"$(git log -1 --format=%ct)" +%Y-%m-%dT%H:%M:%SZ)" \
#     -t ghcr.io/vitals-dev/vitals:dev .

# The build stage cross-compiles on the builder's own platform; golang's image holds Debian's
# ca-certificates, whose bundle goes into the image.
FROM --platform=$BUILDPLATFORM golang:1.26-trixie AS build
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    PLATFORM="${TARGETOS:-linux}/${TARGETARCH:-amd64}" VERSION="$VERSION" bash hack/image.sh --rootfs /rootfs

FROM scratch
COPY --from=build /rootfs/ /
USER 65532:65532
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ENTRYPOINT ["/vitals"]
CMD ["run", "-c", "/etc/vitals/vitals.yaml"]
ARG VERSION=dev
ARG REVISION
ARG CREATED
LABEL org.opencontainers.image.title="vitals" \
      org.opencontainers.image.description="Startup, liveness and readiness checks that mean what they say: the vitals agent and CLI" \
      org.opencontainers.image.url="https://github.com/vitals-dev/vitals" \
      org.opencontainers.image.source="https://github.com/vitals-dev/vitals" \
      org.opencontainers.image.documentation="https://github.com/vitals-dev/vitals/blob/main/docs/image.md" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$REVISION" \
      org.opencontainers.image.created="$CREATED"
