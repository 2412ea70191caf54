# python3 socket_lines.py N W [tcp]: numbered lines through an AF_UNIX
# connection (with tcp: TCP on 127.0.0.1, a port the system chooses).
# The program binds lines.sock in its working directory and forks a server
# that waits with a selector (epoll) for the connection and each request,
# and answers each line in capitals after W rounds of hashing; the client
# sends N numbered lines one by one and prints each answer, then a checksum
# of them all. The same bytes every run.
import hashlib, os, selectors, socket, sys
n, w = int(sys.argv[1]), int(sys.argv[2])
tcp = len(sys.argv) > 3 and sys.argv[3] == "tcp"
name = "lines.sock"
if os.path.exists(name):
    os.unlink(name)
if tcp:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    name = listener.getsockname()
else:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(name)
listener.listen(1)
pid = os.fork()
if pid == 0:
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    while True:
        for key, _ in sel.select():
            if key.fileobj is listener:
                conn, _ = listener.accept()
                sel.register(conn, selectors.EVENT_READ)
                continue
            data = key.fileobj.recv(4096)
            if not data:
                os._exit(0)
            h = data
            for _ in range(w):
                h = hashlib.sha256(h).digest()
            key.fileobj.sendall(data.upper())
listener.close()
client = socket.socket(listener.family, socket.SOCK_STREAM)
client.connect(name)
f = client.makefile("rwb")
total = hashlib.md5()
for i in range(1, n + 1):
    f.write(b"line %d\n" % i)
    f.flush()
    answer = f.readline()
    total.update(answer)
    print(answer.decode().strip(), flush=True)
f.close()
client.close()
os.waitpid(pid, 0)
if not tcp:
    os.unlink(name)
print("checksum", total.hexdigest(), flush=True)
