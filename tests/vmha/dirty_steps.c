/* dirty_steps: a guest that writes a known set of pages per step and touches
   no other memory (no libc, no stack), for the dirty-tracking exactness test.
   Step s (1..16) writes one byte to each page p of a 64-page buffer with
   (p * 7 + s * 3) % 5 == 0, then has the VMM write 8 bytes into page
   (s * 11) % 64 with getrandom, then calls getppid as the step marker.
   With any argument, every step also writes page 0 (a page rewritten epoch
   after epoch: the hot tracker's case).
   Finally exit(0). The test reads the buffer's address from the ELF symbol
   table (`dirty_buffer`), so the program stays trivial. */
__attribute__((aligned(4096))) char dirty_buffer[64 * 4096];

__asm__(
    ".globl _start\n"
    "_start:\n"
    "  lea dirty_buffer(%rip), %r12\n"
    "  mov (%rsp), %r15\n" /* argc */
    "  mov $1, %r13\n" /* s = 1 */
    "1:\n"
    "  xor %r14, %r14\n" /* p = 0 */
    "2:\n"
    "  lea (%r14,%r14,2), %rax\n" /* rax = 3p */
    "  lea (%rax,%r14,4), %rax\n" /* rax = 7p */
    "  lea (%r13,%r13,2), %rcx\n" /* rcx = 3s */
    "  add %rcx, %rax\n"
    "  xor %edx, %edx\n"
    "  mov $5, %ecx\n"
    "  div %rcx\n" /* rdx = (7p + 3s) % 5 */
    "  test %rdx, %rdx\n"
    "  jnz 3f\n"
    "  mov %r14, %rax\n"
    "  shl $12, %rax\n"
    "  mov %r13b, (%r12,%rax)\n" /* buffer[p * 4096] = s */
    "3:\n"
    "  inc %r14\n"
    "  cmp $64, %r14\n"
    "  jb 2b\n"
    "  cmp $1, %r15\n"
    "  jbe 4f\n"
    "  mov %r13b, 1(%r12)\n" /* buffer[1] = s: page 0, every step */
    "4:\n"
    "  imul $11, %r13, %rax\n"
    "  and $63, %rax\n"
    "  shl $12, %rax\n"
    "  lea 64(%r12,%rax), %rdi\n" /* getrandom(buffer + q * 4096 + 64, 8, 0) */
    "  mov $8, %esi\n"
    "  xor %edx, %edx\n"
    "  mov $318, %eax\n"
    "  syscall\n"
    "  mov $110, %eax\n" /* getppid: the step marker */
    "  syscall\n"
    "  inc %r13\n"
    "  cmp $17, %r13\n"
    "  jb 1b\n"
    "  xor %edi, %edi\n"
    "  mov $231, %eax\n" /* exit_group(0) */
    "  syscall\n");
