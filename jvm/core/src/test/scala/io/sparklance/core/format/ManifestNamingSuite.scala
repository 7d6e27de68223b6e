package io.sparklance.core.format

import org.scalatest.funsuite.AnyFunSuite
class ManifestNamingSuite extends AnyFunSuite {

  test("V1 names are the plain version") {
    assert(ManifestNaming.V1.fileName(7) == "7.manifest")
    assert(ManifestNaming.V1.parse("7.manifest").contains(7L))
    assert(ManifestNaming.V1.parse("07.manifest").isEmpty)
    assert(ManifestNaming.V1.parse("7.manifest.tmp").isEmpty)
    assert(ManifestNaming.V1.parse("x.manifest").isEmpty)
  }

  test("V2 names are u64::MAX minus the version, zero padded to 20 digits (as pylance writes)") {
    assert(ManifestNaming.V2.fileName(1) == "18446744073709551614.manifest")
    assert(ManifestNaming.V2.fileName(3) == "18446744073709551612.manifest")
    assert(ManifestNaming.V2.fileName(Long.MaxValue) == "09223372036854775808.manifest")
    Seq(1L, 2L, 99L, 123456789L, Long.MaxValue).foreach { v =>
      assert(ManifestNaming.V2.parse(ManifestNaming.V2.fileName(v)).contains(v))
    }
    assert(ManifestNaming.V2.parse("1.manifest").isEmpty)
  }

  test("V2 names sort newest first") {
    val names = (1L to 12L).map(ManifestNaming.V2.fileName)
    assert(names.sorted == names.reverse)
  }

  test("classify tells the scheme of a file name and ignores other files") {
    assert(ManifestNaming.classify("3.manifest").contains(ManifestNaming.V1 -> 3L))
    assert(ManifestNaming.classify("18446744073709551612.manifest").contains(ManifestNaming.V2 -> 3L))
    assert(ManifestNaming.classify("latest_version_hint.json").isEmpty)
    assert(ManifestNaming.classify("3.manifest-7f3e2c1a-uuid").isEmpty, "staged manifests are not versions")
  }
}
