# Quiver's container image: `quiver serve` on 0.0.0.0:7878, the store in the volume /data.
#
# Build (from the repository root; any OCI builder: docker, podman, buildah):
#
#   docker build -t quiver .
#   podman build -t quiver .          # or: buildah bud -t quiver .
#
# Stage 1 builds the `quiver` binary with the pinned Rust toolchain from the committed
# Cargo.lock (--locked); stage 2 is a small Debian runtime holding only that binary, run as
# the unprivileged user `quiver` (uid/gid 10001). The default build has no CUDA feature.
#
# Load data into the volume (a one-shot container; the file mounted read-only; `load` adds
# to an existing store):
#
#   docker volume create quiver-data
#   docker run --rm -v quiver-data:/data -v "$PWD/data.nt:/in/data.nt:ro" \
#     quiver load --location /data/store /in/data.nt
#
#   (a directory or .gz works too; `load --location /data/store --lubm 1` generates LUBM-1)
#
# Serve it read-only (the default command) on http://localhost:7878/:
#
#   docker run -d --name quiver -p 7878:7878 -v quiver-data:/data quiver
#
# Serve it writable (SPARQL Update and the Graph Store Protocol). On a non-loopback address
# such as 0.0.0.0 quiver refuses --writable without an update token: give it through the
# environment (not --update-token, which the process list shows); clients then send
# `Authorization: Bearer TOKEN` with each write. `--create` starts from an empty store when
# /data/store holds none:
#
#   docker run -d -p 7878:7878 -v quiver-data:/data -e QUIVER_UPDATE_TOKEN="$TOKEN" \
#     quiver serve --location /data/store --bind 0.0.0.0:7878 --writable --create
#
# Other commands run the same way (`docker run --rm -v quiver-data:/data quiver info
# --location /data/store`). Without --max-memory, serve's memory budget for queries is a
# quarter of the container's memory limit (`--memory`, compose's mem_limit, read from its
# cgroup), or of the machine's RAM without one.
#
# No HEALTHCHECK: the runtime image has no HTTP client, and the OCI image format (podman and
# buildah's default) drops the instruction. deploy/compose.yaml probes GET /status instead.
# The server stops cleanly on SIGTERM, letting queries in flight finish for up to the query
# timeout (60 s by default): give `docker stop` a longer grace (`-t 70`).

# ---- stage 1: build ------------------------------------------------------------------
FROM docker.io/library/rust:1.89-slim-bookworm AS build

WORKDIR /src
# What the build reads: the workspace manifest and lock, the crates, queries/ (the LUBM
# query sets that quiver-cli embeds with include_str!) and the Python package's crate, a
# member cargo loads but does not build here (its manifest and sources); fuzz/ is outside
# the workspace; .dockerignore keeps target/ and the rest out of the context.
COPY Cargo.toml Cargo.lock ./
COPY crates ./crates
COPY queries ./queries
COPY python/Cargo.toml ./python/Cargo.toml
COPY python/src ./python/src

# Strip the binary (the release profile keeps line tables for backtraces; the image does
# not need them).
ENV CARGO_PROFILE_RELEASE_STRIP=symbols \
    CARGO_TERM_COLOR=never
RUN cargo build --release --locked -p quiver-cli \
 && install -D -m 0755 target/release/quiver /out/quiver

# ---- stage 2: runtime ----------------------------------------------------------------
FROM docker.io/library/debian:bookworm-slim

# The unprivileged user, and /data owned by it before VOLUME so that a new named volume
# starts with that ownership.
RUN groupadd --gid 10001 quiver \
 && useradd --no-log-init --uid 10001 --gid quiver \
      --home-dir /data --no-create-home --shell /usr/sbin/nologin quiver \
 && mkdir -p /data \
 && chown quiver:quiver /data

COPY --from=build /out/quiver /usr/local/bin/quiver

# Numeric, so that runtimes can check it is not root (Kubernetes' runAsNonRoot): `quiver`.
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
EXPOSE 7878

ENTRYPOINT ["quiver"]
CMD ["serve", "--location", "/data/store", "--bind", "0.0.0.0:7878"]
