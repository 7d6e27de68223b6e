package io.sparklance.core.commit

import java.io.IOException
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicInteger

import scala.jdk.CollectionConverters._

/**
 * An [[ExternalManifestStore]] in memory for tests, with injectable faults: `failPuts(n)` makes the next n
 * put-if-absent calls fail before recording anything; `failPutsAfterRecording(n)` makes them record, then fail
 * (the commit point passed, but the writer cannot know).
 */
final class InMemoryManifestStore extends ExternalManifestStore {
  /** (table, version) -> recorded path. */
  val records = new ConcurrentHashMap[(String, Long), String]()
  private val failures = new AtomicInteger()
  private val failuresAfterRecording = new AtomicInteger()

  def failPuts(times: Int): Unit = failures.set(times)
  def failPutsAfterRecording(times: Int): Unit = failuresAfterRecording.set(times)

  private def take(counter: AtomicInteger): Boolean = counter.getAndUpdate(n => math.max(n - 1, 0)) > 0

  override def putIfNotExists(table: String, version: Long, path: String, size: Long): Boolean = {
    if (take(failures)) throw new IOException("injected failure of the store before recording")
    val won = records.putIfAbsent(table -> version, path) == null
    if (take(failuresAfterRecording)) throw new IOException("injected failure of the store after recording")
    won
  }

  override def putIfExists(table: String, version: Long, path: String, size: Long): Unit =
    if (records.replace(table -> version, path) == null) throw new IllegalStateException(s"no record of $version")

  override def latest(table: String): Option[(Long, String)] =
    records.asScala.collect { case ((t, v), p) if t == table => v -> p }.maxByOption(_._1)
}
