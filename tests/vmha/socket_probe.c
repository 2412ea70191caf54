/* socket_probe: AF_UNIX sockets as a program inside vmha uses them, printed
   as facts that hold natively and under vmha alike: an unconnected socket
   (its type, name, errors of connect to nothing and to a file that is no
   socket), socketpairs of each type carrying messages through sendmsg,
   sendto, recvfrom and recvmsg with their boundaries, between two processes,
   and an EPIPE without SIGPIPE. getppid() marks where the test checkpoints:
   messages wait in the pairs there. `socket_probe server` binds a name in
   the working directory, listens, and serves a forked child that connects
   to it (getppid() marks where the child's connection and message wait in
   the listener's queue); `socket_probe epoll` watches a socketpair end, a
   pipe and a listener with epoll (getppid() marks a checkpoint after they
   were added) while a forked child makes each ready; `socket_probe tcp`
   serves a forked child over TCP on 127.0.0.1 (a port the kernel, or vmha,
   chooses; getppid() marks a checkpoint with the connection waiting), and
   a listening IPv6 socket given no port; `socket_probe connect PATH` connects to PATH twice
   and prints the errors; `socket_probe inet` makes a UDP socket and
   prints whether it could; `socket_probe self` connects to its own
   blocking listener. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *err_name(int e) {
  switch (e) {
    case 0:
      return "ok";
    case ENOENT:
      return "ENOENT";
    case ECONNREFUSED:
      return "ECONNREFUSED";
    case ENOTCONN:
      return "ENOTCONN";
    case EPIPE:
      return "EPIPE";
    case EISCONN:
      return "EISCONN";
    case ENOSYS:
      return "ENOSYS";
    case EAGAIN:
      return "EAGAIN";
    case EADDRINUSE:
      return "EADDRINUSE";
    case EINVAL:
      return "EINVAL";
    default:
      return strerror(e);
  }
}

static const char *connect_to(int fd, const char *path) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  strncpy(sa.sun_path, path, sizeof sa.sun_path - 1);
  return err_name(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 ? 0 : errno);
}

/* Three messages of 1, 2 and 3 bytes into end 0 of a pair of `type`. */
static void send_three(int sv[2]) {
  struct iovec iov[2] = {{"c", 1}, {"cc", 2}};
  struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
  if (send(sv[0], "a", 1, 0) != 1 || sendto(sv[0], "bb", 2, 0, NULL, 0) != 2 || sendmsg(sv[0], &m, 0) != 3)
    printf("send failed: %s\n", err_name(errno));
}

/* The messages waiting at end 1, as their lengths and bytes. */
static void receive_all(const char *what, int fd) {
  char buf[64];
  printf("%s:", what);
  for (int i = 0; i < 3; ++i) {
    struct iovec iov = {buf, sizeof buf};
    struct sockaddr_un from;
    struct msghdr m = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1};
    ssize_t n = i == 1 ? recvfrom(fd, buf, sizeof buf, MSG_DONTWAIT, NULL, NULL) : recvmsg(fd, &m, MSG_DONTWAIT);
    if (n < 0) {
      printf(" %s", err_name(errno));
      break;
    }
    printf(" %zd=%.*s", n, (int)n, buf);
    if (i != 1) printf("(name %u)", (unsigned)m.msg_namelen);
  }
  printf("\n");
}

static int probe(void) {
  int u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int type = 0;
  socklen_t len = sizeof type;
  getsockopt(u, SOL_SOCKET, SO_TYPE, &type, &len);
  printf("socket: %s, stream %s\n", u >= 0 ? "yes" : err_name(errno), type == SOCK_STREAM ? "yes" : "NO");
  struct sockaddr_un name;
  len = sizeof name;
  memset(&name, 0, sizeof name);
  const char *got = err_name(getsockname(u, (struct sockaddr *)&name, &len) ? errno : 0);
  printf("getsockname: %s family %s\n", got, name.sun_family == AF_UNIX ? "AF_UNIX" : "other");
  len = sizeof name;
  printf("getpeername: %s\n", err_name(getpeername(u, (struct sockaddr *)&name, &len) ? errno : 0));
  printf("connect to nothing: %s %s\n", connect_to(u, "nonexistent-dir/socket"), connect_to(u, "not-there"));
  close(open("a-file", O_WRONLY | O_CREAT, 0644));
  printf("connect to a file: %s\n", connect_to(u, "a-file"));
  printf("send unconnected: %s\n", err_name(send(u, "x", 1, MSG_NOSIGNAL) < 0 ? errno : 0));
  char link[64], want[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", u);
  ssize_t n = readlink(link, want, sizeof want - 1);
  printf("fd link is a socket: %s\n", n > 8 && strncmp(want, "socket:[", 8) == 0 ? "yes" : "NO");

  int dg[2], sp[2], st[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM, 0, dg) || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp) ||
      socketpair(AF_UNIX, SOCK_STREAM, 0, st))
    return 1;
  send_three(dg);
  send_three(sp);
  send_three(st);
  getppid();  // the test checkpoints here: messages wait in three pairs
  receive_all("dgram", dg[1]);
  receive_all("seqpacket", sp[1]);
  receive_all("stream", st[1]);

  /* A child's messages, received by a blocking recv in the parent. */
  pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < 3; ++i) send(dg[1], "from child", 10, 0);
    _exit(0);
  }
  char buf[32];
  for (int i = 0; i < 3; ++i) {
    ssize_t got = recv(dg[0], buf, sizeof buf, 0);
    printf("child's message %d: %.*s\n", i, (int)(got < 0 ? 0 : got), buf);
  }
  int status = 0;
  waitpid(child, &status, 0);
  close(st[1]);
  signal(SIGPIPE, SIG_DFL);
  printf("send to a closed peer: %s\n", err_name(send(st[0], "x", 1, MSG_NOSIGNAL) < 0 ? errno : 0));
  printf("done\n");
  return 0;
}

/* A forked client's request: sends `what`, prints the answer and ends. */
static void ask(int fd, const char *what) {
  send(fd, what, strlen(what), 0);
  char buf[16];
  ssize_t n = recv(fd, buf, sizeof buf, 0);
  printf("child got: %.*s\n", (int)(n < 0 ? 0 : n), buf);
  exit(0);
}

static int server(void) {
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = "srv.sock"};
  int b = bind(s, (struct sockaddr *)&sa, sizeof sa);
  printf("bind: %s, listen: %s\n", err_name(b ? errno : 0), err_name(listen(s, 4) ? errno : 0));
  struct sockaddr_un name = {0};
  socklen_t len = sizeof name;
  getsockname(s, (struct sockaddr *)&name, &len);
  printf("name: %s (%u bytes)\n", name.sun_path, (unsigned)len);
  int again = socket(AF_UNIX, SOCK_STREAM, 0);
  printf("second bind: %s\n", err_name(bind(again, (struct sockaddr *)&sa, sizeof sa) ? errno : 0));
  int quiet = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un qa = {.sun_family = AF_UNIX, .sun_path = "quiet.sock"};
  bind(quiet, (struct sockaddr *)&qa, sizeof qa);
  printf("connect to a bound socket not listening: %s\n", connect_to(again, "quiet.sock"));
  fcntl(s, F_SETFL, O_NONBLOCK);
  int nb = accept4(s, NULL, NULL, 0);
  printf("accept of an empty queue: %s\n", nb < 0 && errno == EAGAIN ? "EAGAIN" : "other");
  fcntl(s, F_SETFL, 0);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    int c = socket(AF_UNIX, SOCK_STREAM, 0);
    printf("child connects: %s\n", connect_to(c, "srv.sock"));
    struct sockaddr_un them = {0}, me = {0};
    socklen_t tl = sizeof them, ml = sizeof me;
    getpeername(c, (struct sockaddr *)&them, &tl);
    getsockname(c, (struct sockaddr *)&me, &ml);
    printf("child's peer: %s (%u bytes), its own name: %u bytes\n", them.sun_path, (unsigned)tl, (unsigned)ml);
    ask(c, "hello");
  }
  struct pollfd pfd = {s, POLLIN, 0};
  int ready = poll(&pfd, 1, -1);
  printf("poll: %d %s\n", ready, pfd.revents & POLLIN ? "readable" : "not readable");
  getppid(); /* the test checkpoints here: the child's connection and "hello" wait */
  struct sockaddr_un peer;
  len = sizeof peer;
  int a = accept4(s, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
  char buf[16];
  ssize_t n = recv(a, buf, sizeof buf, 0);
  printf("accepted (peer %u bytes): %.*s\n", (unsigned)len, (int)(n < 0 ? 0 : n), buf);
  struct sockaddr_un own = {0};
  socklen_t ol = sizeof own;
  getsockname(a, (struct sockaddr *)&own, &ol);
  printf("accepted socket's own name: %s (%u bytes)\n", own.sun_path, (unsigned)ol);
  send(a, "ack", 3, 0);
  int status = 0;
  waitpid(child, &status, 0);
  close(a);
  close(s);
  printf("socket file: %s\n", access("srv.sock", F_OK) == 0 ? "left" : "gone");
  return 0;
}

static int watch(void) {
  int ep = epoll_create1(EPOLL_CLOEXEC), sp[2], pp[2];
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = "ep.sock"};
  if (ep < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sp) || pipe(pp) || bind(s, (struct sockaddr *)&sa, sizeof sa) ||
      listen(s, 4))
    return 1;
  int fds[4] = {sp[0], pp[0], s, sp[1]};
  for (int i = 0; i < 4; ++i) {
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 100 + i};
    epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
  }
  struct epoll_event ev = {.events = EPOLLIN};
  printf("add twice: %s\n", err_name(epoll_ctl(ep, EPOLL_CTL_ADD, pp[0], &ev) ? errno : 0));
  epoll_ctl(ep, EPOLL_CTL_DEL, sp[1], NULL);
  struct epoll_event got[8];
  printf("nothing ready: %d\n", epoll_wait(ep, got, 8, 0));
  getppid(); /* the test checkpoints here: three descriptors watched */
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    send(sp[1], "x", 1, 0);
    write(pp[1], "y", 1);
    int c = socket(AF_UNIX, SOCK_STREAM, 0);
    connect_to(c, "ep.sock");
    exit(0);
  }
  int seen = 0;
  while ((seen & 7) != 7) {
    int n = epoll_wait(ep, got, 8, -1);
    for (int i = 0; i < n; ++i) {
      int tag = (int)got[i].data.u64 - 100;
      seen |= 1 << tag;
    }
  }
  waitpid(child, NULL, 0);
  printf("ready: socketpair, pipe, listener%s\n", seen & 8 ? ", and the removed one" : "");
  printf("done\n");
  return 0;
}

static int tcp(void) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP), one = 1, domain = 0;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  printf("TCP_NODELAY: %s\n", err_name(setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) ? errno : 0));
  socklen_t len = sizeof domain;
  getsockopt(s, SOL_SOCKET, SO_DOMAIN, &domain, &len);
  printf("domain: %s\n", domain == AF_INET ? "AF_INET" : "other");
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  int b = bind(s, (struct sockaddr *)&a, sizeof a);
  printf("bind: %s, listen: %s\n", err_name(b ? errno : 0), err_name(listen(s, 4) ? errno : 0));
  len = sizeof a;
  getsockname(s, (struct sockaddr *)&a, &len);
  char text[32];
  inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  printf("bound to %s, a port chosen: %s\n", text, ntohs(a.sin_port) > 0 ? "yes" : "NO");
  int again = socket(AF_INET, SOCK_STREAM, 0);
  printf("second bind: %s\n", err_name(bind(again, (struct sockaddr *)&a, sizeof a) ? errno : 0));
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    int c = socket(AF_INET, SOCK_STREAM, 0);
    printf("child connects: %s\n", err_name(connect(c, (struct sockaddr *)&a, sizeof a) ? errno : 0));
    struct sockaddr_in peer = {0};
    socklen_t pl = sizeof peer;
    getpeername(c, (struct sockaddr *)&peer, &pl);
    printf("child's peer is the listener: %s\n", peer.sin_port == a.sin_port ? "yes" : "NO");
    ask(c, "ping");
  }
  struct pollfd pfd = {s, POLLIN, 0};
  poll(&pfd, 1, -1);
  getppid(); /* the test checkpoints here: the child's connection and "ping" wait */
  struct sockaddr_in from = {0};
  len = sizeof from;
  int c = accept(s, (struct sockaddr *)&from, &len);
  char buf[16];
  ssize_t n = recv(c, buf, sizeof buf, 0);
  printf("accepted from %s: %.*s\n", from.sin_family == AF_INET ? "AF_INET" : "other", (int)(n < 0 ? 0 : n), buf);
  send(c, "PONG", 4, 0);
  waitpid(child, NULL, 0);
  int s6 = socket(AF_INET6, SOCK_STREAM, 0);
  struct sockaddr_in6 a6 = {0};
  len = sizeof a6;
  listen(s6, 1);
  getsockname(s6, (struct sockaddr *)&a6, &len);
  printf("IPv6 listener given no port: %s, a port chosen: %s\n", a6.sin6_family == AF_INET6 ? "AF_INET6" : "other",
         ntohs(a6.sin6_port) > 0 ? "yes" : "NO");
  return 0;
}

/* A process connects to its own blocking listener (the connection waits in
   the backlog: connect returns at once), accepts it and sends through it. */
static int self_connect(void) {
  int l = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un sa;
  memset(&sa, 0, sizeof sa);
  sa.sun_family = AF_UNIX;
  strcpy(sa.sun_path, "self.sock");
  if (bind(l, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(l, 4) != 0) return 1;
  int c = socket(AF_UNIX, SOCK_STREAM, 0);
  printf("self connect: %s\n", connect_to(c, "self.sock"));
  int a = accept(l, NULL, NULL);
  printf("self accept: %s\n", err_name(a >= 0 ? 0 : errno));
  char got = 0;
  printf("self message: %s\n", write(c, "x", 1) == 1 && read(a, &got, 1) == 1 && got == 'x' ? "ok" : "lost");
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "self") == 0) return self_connect();
  if (argc == 2 && strcmp(argv[1], "tcp") == 0) return tcp();
  if (argc == 2 && strcmp(argv[1], "server") == 0) return server();
  if (argc == 2 && strcmp(argv[1], "epoll") == 0) return watch();
  if (argc == 3 && strcmp(argv[1], "connect") == 0) {
    int u = socket(AF_UNIX, SOCK_STREAM, 0);
    const char *first = connect_to(u, argv[2]);
    printf("connect: %s %s\n", first, connect_to(u, argv[2]));
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "inet") == 0) {
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    printf("inet: %s\n", s >= 0 ? "yes" : err_name(errno));
    return 0;
  }
  return probe();
}
