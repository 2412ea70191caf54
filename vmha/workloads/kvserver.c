/* kvserver: a request/response key-value server answering a client over a
   socketpair. One process plays both parts (vmha runs one thread): the
   client sends a window of requests, the server answers each, the client
   checks the answers. Many small messages: system-call heavy. */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define KEYS 4096
static uint64_t table[KEYS];

struct msg {
  uint32_t op, key;
  uint64_t value;
};

static int full_io(int fd, void *buf, size_t n, int writing) {
  char *p = buf;
  while (n) {
    ssize_t r = writing ? write(fd, p, n) : read(fd, p, n);
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

int main(int argc, char **argv) {
  long requests = argc > 1 ? atol(argv[1]) : 20000;
  int window = 16, sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
    perror("socketpair");
    return 1;
  }
  int client = sv[0], server = sv[1];
  uint64_t seed = 7, checksum = 0, expect[KEYS] = {0};
  long sent = 0, answered = 0;
  while (answered < requests) {
    for (int i = 0; i < window && sent < requests; ++i, ++sent) { /* client: a window of requests */
      seed = seed * 6364136223846793005ull + 1;
      struct msg m = {(seed >> 40) % 3 == 0 ? 1u : 0u, (uint32_t)((seed >> 20) % KEYS), sent};
      if (full_io(client, &m, sizeof m, 1)) {
        perror("client write");
        return 1;
      }
    }
    struct pollfd pfd = {server, POLLIN, 0};
    while (poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN)) { /* server: answer what is waiting */
      struct msg m;
      if (full_io(server, &m, sizeof m, 0)) {
        perror("server read");
        return 1;
      }
      if (m.op == 1) table[m.key] = m.value * 2654435761u;
      struct msg reply = {m.op, m.key, table[m.key]};
      if (full_io(server, &reply, sizeof reply, 1)) {
        perror("server write");
        return 1;
      }
    }
    while (answered < sent) { /* client: collect the answers */
      struct msg r;
      if (full_io(client, &r, sizeof r, 0)) {
        perror("client read");
        return 1;
      }
      if (r.op == 1) expect[r.key] = r.value;
      if (r.value != expect[r.key]) {
        fprintf(stderr, "kvserver: wrong answer for key %u\n", r.key);
        return 1;
      }
      checksum = checksum * 1000003 + r.value + r.key;
      ++answered;
    }
  }
  printf("kvserver requests=%ld checksum=%llx\n", requests, (unsigned long long)checksum);
  return 0;
}
