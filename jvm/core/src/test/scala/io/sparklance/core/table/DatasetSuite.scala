package io.sparklance.core.table

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.core._
import io.sparklance.core.format.{DataFile, FeatureFlags, ManifestFile, ManifestNaming, TestManifests}
import io.sparklance.core.storage.{InMemoryStorage, Storage}

class DatasetSuite extends AnyFunSuite {
  import TestManifests._

  test("versions are listed in order and the latest is found with one listing, under either naming scheme") {
    Seq(ManifestNaming.V1, ManifestNaming.V2).foreach { naming =>
      val (storage, root) = table(12, naming)
      storage.put(Storage.join(root, "_versions/latest_version_hint.json"), """{"version":3}""".getBytes)
      val ds = Dataset.open(storage, root)
      val listing = ds.listVersions()
      assert(listing.naming == naming)
      assert(listing.entries.map(_.version) == (1L to 12L))
      assert(ds.latestVersion() == 12, "the hint file is not trusted")
      val latest = ds.checkoutLatest()
      assert(latest.version == 12 && latest.fragments.map(_.id) == (0L until 12L))
      assert(latest.naming == naming)
    }
  }

  test("a table mixing both naming schemes is refused, naming an example of each") {
    val (storage, root) = table(2, ManifestNaming.V1)
    commit(storage, root, manifest(3, t0.plusSeconds(5)), ManifestNaming.V2)
    val e = intercept[InconsistentTableException](Dataset.open(storage, root).checkoutLatest())
    assert(e.getMessage.contains("mixes the manifest naming schemes"))
    assert(e.getMessage.contains("1.manifest") && e.getMessage.contains("18446744073709551612.manifest"))
  }

  test("checkout by version, by timestamp and by tag") {
    val (storage, root) = table(5)
    val ds = Dataset.open(storage, root)
    assert(ds.checkout(3).version == 3)
    assert(ds.checkoutAsOf(t0.plusSeconds(2)).version == 3, "exactly at the commit time")
    assert(ds.checkoutAsOf(t0.plusMillis(2500)).version == 3, "between two commits: the earlier one")
    assert(ds.checkoutAsOf(t0.plusSeconds(3600)).version == 5)
    storage.put(Storage.join(root, "_refs/tags/release.json"),
      """{"branch":null,"version":2,"createdAt":"2026-11-22T03:04:27.896974141Z","manifestSize":434,"metadata":{}}""".getBytes)
    val tags = ds.tags()
    assert(tags.keySet == Set("release") && tags("release").version == 2 && tags("release").manifestSize.contains(434L))
    assert(ds.checkoutTag("release").version == 2)
  }

  test("missing versions, tags and too-early timestamps are clear errors") {
    val (storage, root) = table(3)
    val ds = Dataset.open(storage, root)
    val v = intercept[VersionNotFoundException](ds.checkout(9))
    assert(v.getMessage.contains("version 9 does not exist") && v.getMessage.contains("from 1 to 3"))
    assert(v.errorClass == "LANCE_VERSION_NOT_FOUND")
    val t = intercept[TagNotFoundException](ds.checkoutTag("nope"))
    assert(t.getMessage.contains("no tag 'nope'") && t.getMessage.contains("no tags"))
    val early = intercept[VersionNotFoundException](ds.checkoutAsOf(t0.minusSeconds(1)))
    assert(early.getMessage.contains("no version was committed at or before 2025-12-31T23:59:59Z"))
    assert(early.getMessage.contains("the first version, 1, was committed at 2026-01-01T00:00:00Z"))
    storage.put(Storage.join(root, "_refs/tags/old.json"), """{"version":42}""".getBytes)
    val dangling = intercept[VersionNotFoundException](ds.checkoutTag("old"))
    assert(dangling.getMessage.contains("tag 'old' points to version 42"))
  }

  test("a directory without manifests is not a table") {
    val storage = new InMemoryStorage
    val e = intercept[NotATableException](Dataset.open(storage, "mem://nothing"))
    assert(e.getMessage.startsWith("mem://nothing is not a Lance table"))
    storage.put("mem://some/data/x.lance", Array[Byte](1))
    assert(intercept[NotATableException](Dataset.open(storage, "mem://some")).getMessage.contains("no manifests"))
  }

  test("a manifest whose version differs from its file name is refused") {
    val storage = new InMemoryStorage
    storage.put("mem://t/_versions/2.manifest", ManifestFile.encode(manifest(1, t0), None))
    val e = intercept[InconsistentTableException](Dataset.open(storage, "mem://t").checkoutLatest())
    assert(e.getMessage.contains("holds version 1, not 2"))
  }

  test("unknown reader feature flags are refused with the flag named; known ones are accepted") {
    val storage = new InMemoryStorage
    commit(storage, "mem://t", manifest(1, t0, readerFlags = FeatureFlags.DeletionFiles | FeatureFlags.StableRowIds))
    commit(storage, "mem://t", manifest(2, t0.plusSeconds(1), readerFlags = 64L | 1L))
    val ds = Dataset.open(storage, "mem://t")
    assert(ds.checkout(1).version == 1)
    val e = intercept[UnsupportedFeatureException](ds.checkout(2))
    assert(e.getMessage.contains("reader feature flags 64") && e.errorClass == "LANCE_UNSUPPORTED_FEATURE")
    FeatureFlags.checkWritable("mem://t", 2, FeatureFlags.BasePaths)
    val w = intercept[UnsupportedFeatureException](FeatureFlags.checkWritable("mem://t", 2, 64L | FeatureFlags.BasePaths))
    assert(w.getMessage.contains("writer feature flags 64"))
  }

  test("storage failures while listing surface as storage errors naming the directory") {
    val (storage, root) = table(2)
    val ds = Dataset.open(storage, root)
    storage.failNext("list", 1)
    // The first listing after open is the one open made (one request fewer on an object store).
    assert(ds.checkoutLatest().version == 2)
    val e = intercept[StorageException](ds.latestVersion())
    assert(e.getMessage.contains("_versions") && e.getMessage.contains("injected failure"))
    assert(ds.latestVersion() == 2)
  }

  test("data and deletion file paths resolve against the table root and base paths") {
    val storage = new InMemoryStorage
    val frag = fragment(0, 10).toBuilder
      .setDeletionFile(io.sparklance.proto.TableProtos.DeletionFile.newBuilder().setReadVersion(1)
        .setId(-1L).setNumDeletedRows(1).setFileTypeValue(1))
      .build()
    val m = manifest(1, t0, Seq(frag)).toBuilder
      .addBasePaths(io.sparklance.proto.TableProtos.BasePath.newBuilder().setId(7).setPath("mem://other/")
        .setIsDatasetRoot(false)).build()
    commit(storage, "mem://t", m)
    val s = Dataset.open(storage, "mem://t").checkoutLatest()
    val f = s.fragments.head
    assert(s.dataFilePath(f.files.head) == "mem://t/data/f0.lance")
    assert(s.deletionFilePath(f).contains("mem://t/_deletions/0-1-18446744073709551615.bin"))
    val other = new DataFile(f.files.head.proto.toBuilder.setBaseId(7).build())
    assert(s.dataFilePath(other) == "mem://other/f0.lance")
    val missing = new DataFile(f.files.head.proto.toBuilder.setBaseId(8).build())
    assert(intercept[InconsistentTableException](s.dataFilePath(missing)).getMessage.contains("base path id 8"))
  }

  test("a tag on a branch reads the branch's version, not main's of the same number") {
    val (storage, root) = table(3)
    val branchRoot = Storage.join(root, "tree/dev")
    // The branch's version 3 has 7 fragments; main's has 3.
    commit(storage, branchRoot, manifest(2, t0.plusSeconds(10), (0 until 2).map(i => fragment(i, 10))))
    commit(storage, branchRoot, manifest(3, t0.plusSeconds(11), (0 until 7).map(i => fragment(i, 10))))
    storage.put(Storage.join(root, "_refs/tags/on_dev.json"), """{"branch":"dev","version":3}""".getBytes)
    storage.put(Storage.join(root, "_refs/tags/on_main.json"), """{"branch":null,"version":3}""".getBytes)
    val ds = Dataset.open(storage, root)
    assert(ds.checkoutTag("on_dev").fragments.size == 7)
    assert(ds.checkoutTag("on_main").fragments.size == 3)
    assert(ds.branch("dev").checkoutLatest().version == 3)
    storage.put(Storage.join(root, "_refs/tags/gone.json"), """{"branch":"gone","version":1}""".getBytes)
    val gone = intercept[VersionNotFoundException](ds.checkoutTag("gone"))
    assert(gone.getMessage.contains("tag 'gone' points to version 1 of branch 'gone'"))
    assert(gone.getMessage.contains("branch 'gone' does not exist"))
    Seq("../x", "a//b", "", "a/../b", "a\\b", "x\u0000").foreach { bad =>
      assert(intercept[InvalidArgumentException](ds.branch(bad)).getMessage.contains("not a valid branch name"), bad)
    }
  }

  test("a detached version (above 2^63) is read by its d<version>.manifest name and is never the latest") {
    val (storage, root) = table(2)
    val detached = java.lang.Long.parseUnsignedLong("15670570336193340214")
    val m = manifest(detached, t0.plusSeconds(30), (0 until 4).map(i => fragment(i, 10)))
    storage.create(Storage.join(root, s"_versions/d15670570336193340214.manifest"), ManifestFile.encode(m, None))
    val ds = Dataset.open(storage, root)
    assert(ManifestNaming.isDetached(detached))
    assert(ds.checkout(detached).fragments.size == 4)
    assert(ds.latestVersion() == 2)
    val missing = intercept[VersionNotFoundException](ds.checkout(detached + 1))
    assert(missing.getMessage.contains("detached version 15670570336193340215 does not exist"))
    assert(ManifestNaming.parseVersion("15670570336193340214").contains(detached))
    assert(ManifestNaming.parseVersion(" 3 ").contains(3L))
    Seq("-1", "18446744073709551616", "3.0", "", "x").foreach(t => assert(ManifestNaming.parseVersion(t).isEmpty, t))
  }

  test("a table is created only where no other data is") {
    val storage = new InMemoryStorage
    Dataset.checkCanCreate(storage, "mem://new.lance")
    storage.put("mem://partial.lance/data/abc.lance", Array[Byte](1))
    storage.put("mem://partial.lance/_transactions/0-x.txn", Array[Byte](1))
    Dataset.checkCanCreate(storage, "mem://partial.lance")
    storage.put("mem://parquet/part-00000.parquet", Array[Byte](1))
    storage.put("mem://parquet/_SUCCESS", Array[Byte]())
    storage.put("mem://parquet/.part-00000.parquet.crc", Array[Byte]())
    val e = intercept[InvalidArgumentException](Dataset.checkCanCreate(storage, "mem://parquet"))
    assert(e.getMessage.contains("already holds other files (_SUCCESS, part-00000.parquet)"))
  }
}
