// heap_counter: counts every allocation of the test binary (heap_counter.h).
// Release: the replaceable global operator new / delete (sized and aligned variants all
// count; delete frees without counting), forwarding to malloc / aligned_alloc / free.
// AddressSanitizer: ASan's own allocator hooks instead (every malloc and operator new it
// serves, counted), so that ASan keeps its operator new / delete and still reports
// mismatched new / delete and sized-delete errors in the engine tests.
#include "tests/engine/heap_counter.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
// The sanitizer runtime's hook registration (sanitizer/allocator_interface.h, which GCC does
// not ship; libasan exports the function).
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, size_t),
                                                         void (*free_hook)(const volatile void*));
#endif

namespace {

std::atomic<uint64_t> g_calls{0}, g_bytes{0};
thread_local uint64_t t_calls = 0, t_bytes = 0;  // constant-initialised: safe in operator new

void count(size_t n) {
  g_calls.fetch_add(1, std::memory_order_relaxed);
  g_bytes.fetch_add(n, std::memory_order_relaxed);
  t_calls += 1, t_bytes += n;
}

#if defined(__SANITIZE_ADDRESS__)
void on_malloc(const volatile void*, size_t n) { count(n); }
void on_free(const volatile void*) {}
[[maybe_unused]] const int g_hooks_installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
#else
void* counted(size_t n, size_t align) {
  count(n);
  if (n == 0) n = 1;
  if (align <= alignof(std::max_align_t)) return std::malloc(n);
  return std::aligned_alloc(align, (n + align - 1) / align * align);
}

void* counted_or_throw(size_t n, size_t align) {
  void* p = counted(n, align);
  if (!p) throw std::bad_alloc();
  return p;
}

#endif

}  // namespace

namespace st::test {
HeapCount heap_count() {
  return {g_calls.load(std::memory_order_relaxed), g_bytes.load(std::memory_order_relaxed)};
}
HeapCount heap_count_this_thread() { return {t_calls, t_bytes}; }
}  // namespace st::test

#if !defined(__SANITIZE_ADDRESS__)
void* operator new(size_t n) { return counted_or_throw(n, 0); }
void* operator new[](size_t n) { return counted_or_throw(n, 0); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return counted(n, 0); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return counted(n, 0); }
void* operator new(size_t n, std::align_val_t a) { return counted_or_throw(n, size_t(a)); }
void* operator new[](size_t n, std::align_val_t a) { return counted_or_throw(n, size_t(a)); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted(n, size_t(a)); }
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return counted(n, size_t(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
#endif
