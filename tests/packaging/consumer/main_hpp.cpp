/* A C++ program that uses an installed park through park/park.hpp, the
 * header-only C++ layer: std::scoped_lock on two park mutexes from two
 * threads, a semaphore and a condition variable. Needs C++17 and no flags
 * beyond those of the C library. Exits non-zero if anything is not as
 * documented. */
#include <park/park.hpp>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);          \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

static park::mutex a, b;
static park::binary_semaphore done{0};

int main()
{
    long count = 0;
    std::thread other([&] {
        for (int i = 0; i < 1000; i++) {
            std::scoped_lock both(b, a);
            count++;
        }
        done.release();
    });
    for (int i = 0; i < 1000; i++) {
        std::scoped_lock both(a, b);
        count++;
    }
    CHECK(done.try_acquire_for(std::chrono::seconds(60)));
    other.join();
    CHECK(count == 2000);

    park::condition_variable cv;
    std::unique_lock<park::mutex> lk(a);
    CHECK(cv.wait_for(lk, std::chrono::milliseconds(1)) == std::cv_status::timeout);
    CHECK(lk.owns_lock());

    std::printf("park.hpp: consumer ok\n");
    return 0;
}
