//! Locking a mutex that a panicking thread may have poisoned.

/// Locks a mutex, carrying on with the data if a panicking thread poisoned it.
pub fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
