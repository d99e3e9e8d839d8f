# codegym/polyglot:latest -- python3 + g++ + make: C and C++ programs in the docker sandbox
# (python3 runs the fork server that supervises every program).
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 g++ make \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/*
ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["bash"]
