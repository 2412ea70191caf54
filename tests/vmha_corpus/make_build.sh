# gcc and make -j2: a small C project (16 modules and a main) generated,
# built, and run.
set -e
mkdir -p src
for i in $(seq 1 16); do
  cat > src/mod$i.c <<C
int mod$i(int x) { int s = 0; for (int k = 0; k < x; ++k) s += (k * $i) % 7; return s; }
C
done
{
  for i in $(seq 1 16); do echo "int mod$i(int);"; done
  echo '#include <stdio.h>'
  echo 'int main(void) { long t = 0;'
  for i in $(seq 1 16); do echo "  t += mod$i(1000 + $i); printf(\"mod$i %d\\n\", mod$i(1000 + $i));"; done
  echo '  printf("total %ld\n", t); return 0; }'
} > src/main.c
cat > Makefile <<'M'
OBJS = $(patsubst src/%.c,obj/%.o,$(wildcard src/*.c))
prog: $(OBJS)
	gcc -o $@ $^
obj/%.o: src/%.c | obj
	gcc -O2 -c -o $@ $<
obj:
	mkdir -p obj
M
make -j2 -s
./prog
