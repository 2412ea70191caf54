# python3's multiprocessing: a Pool of two worker processes maps a function
# over inputs (semaphores in /dev/shm, pipes between the processes).
import multiprocessing as mp
import hashlib

def work(i):
    h = hashlib.sha256()
    for k in range(2000):
        h.update(f"{i}:{k}".encode())
    return i, h.hexdigest()[:16]

if __name__ == "__main__":
    with mp.Pool(2) as pool:
        for i, d in pool.imap(work, range(40)):
            print(i, d, flush=True)
    print("pool done")
