from .lock import RedLock, RedLockFactory
__VERSION__ = '1.0.0'
