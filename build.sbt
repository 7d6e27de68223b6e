// sparklance build: jvm/core (the Lance format, no Spark), jvm/spark (the connector), one assembled runtime jar.
//
// Spark is `provided` and is taken from the jars of the pinned pyspark wheel in .venv (the Makefile creates it):
// pyspark 4.3.0 ships exactly the Spark, Arrow, Hadoop, RoaringBitmap, zstd-jni and lz4-java jars that the
// connector runs against, and Spark 4.3.0 is not published on the Maven repository this project can reach.
// Set SPARK_JARS to point at another Spark distribution's jars directory.
import sbtassembly.AssemblyPlugin.autoImport._

val protobufVersion = "4.33.5"
val scalatestVersion = "3.2.19"

// S3 through Hadoop's S3A, at the Hadoop version Spark 4.3 ships, and the AWS SDK version that hadoop-aws 3.5.0 was
// built against. hadoop-aws declares the whole SDK as one 690 MB `bundle` jar; S3A needs only the S3 client, its
// transfer manager and STS (assumed-role credentials), and the external manifest store needs DynamoDB's client.
// All are `provided`: users add hadoop-aws (e.g. `--packages org.apache.hadoop:hadoop-aws:3.5.0`) as for any S3A job.
val hadoopVersion = "3.5.0"
val awsSdkVersion = "2.35.4"
val awsDeps = Seq(
  ("org.apache.hadoop" % "hadoop-aws" % hadoopVersion).exclude("software.amazon.awssdk", "bundle"),
  "software.amazon.awssdk" % "s3" % awsSdkVersion,
  "software.amazon.awssdk" % "s3-transfer-manager" % awsSdkVersion,
  "software.amazon.awssdk" % "sts" % awsSdkVersion,
  "software.amazon.awssdk" % "dynamodb" % awsSdkVersion,
)

ThisBuild / organization := "io.sparklance"
ThisBuild / version := IO.read(file("VERSION")).trim
ThisBuild / scalaVersion := "2.13.18"
// Warnings are errors, in Scala and Java; -Xsource:3 keeps the code ready for Scala 3's syntax and rules.
ThisBuild / javacOptions ++= Seq("--release", "17", "-Xlint:unchecked", "-Werror")
ThisBuild / scalacOptions ++= Seq("-release", "17", "-deprecation", "-feature", "-unchecked", "-Xlint:-byname-implicit,_",
  "-Werror", "-Xsource:3")

lazy val sparkJarsDir: File = {
  val fromEnv = sys.env.get("SPARK_JARS").map(file(_).getAbsoluteFile)
  val fromVenv = Option((file(".venv").getAbsoluteFile / "lib").listFiles()).toSeq.flatten
    .map(_ / "site-packages" / "pyspark" / "jars").find(_.isDirectory)
  fromEnv.orElse(fromVenv).getOrElse(sys.error(
    "Cannot find Spark's jars: run `make venv` (it installs the pinned pyspark into .venv) or set SPARK_JARS."))
}

/** The Spark distribution's jars, minus the Scala library that sbt itself provides at the same version. */
def sparkJars(keep: String => Boolean): Seq[File] =
  (sparkJarsDir ** "*.jar").get.filter(f => keep(f.getName) && !f.getName.startsWith("scala-"))

// What the format core may see of Spark's distribution: the libraries the design allows, never Spark itself.
val coreJarPrefixes = Seq("arrow-", "flatbuffers-java", "RoaringBitmap", "hadoop-client-", "zstd-jni", "lz4-java",
  "slf4j-api", "jackson-core", "jackson-databind", "jackson-annotations", "netty-buffer", "netty-common",
  "commons-lang3", "log4j-")

// Spark 4 on Java 17 needs these opens (the same list Spark's launcher passes).
val javaModuleOpens = Seq("java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio",
  "java.util", "java.util.concurrent", "java.util.concurrent.atomic", "sun.nio.ch", "sun.nio.cs", "sun.security.action",
  "sun.util.calendar").map(p => s"--add-opens=java.base/$p=ALL-UNNAMED")

lazy val commonSettings = Seq(
  Test / fork := true,
  Test / javaOptions ++= javaModuleOpens ++ Seq("-Xmx3g", "-Dio.netty.tryReflectionSetAccessible=true"),
  Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
  libraryDependencies += "org.scalatest" %% "scalatest" % scalatestVersion % Test,
)

lazy val core = (project in file("jvm/core"))
  .settings(commonSettings)
  .settings(
    name := "sparklance-core",
    Compile / unmanagedJars ++= sparkJars(n => coreJarPrefixes.exists(n.startsWith)).classpath,
    libraryDependencies += "com.google.protobuf" % "protobuf-java" % protobufVersion,
    libraryDependencies ++= awsDeps.map(_ % Provided),
    libraryDependencies += "com.google.protobuf" % "protobuf-java" % protobufVersion % "protobuf",
    PB.protocVersion := protobufVersion,
    Compile / PB.protoSources := Seq((ThisBuild / baseDirectory).value / "protos"),
    Compile / PB.targets := Seq(PB.gens.java -> (Compile / sourceManaged).value / "protobuf"),
  )

lazy val spark = (project in file("jvm/spark"))
  .dependsOn(core % "compile->compile;test->test")
  .settings(commonSettings)
  .settings(
    name := "sparklance-spark",
    Compile / unmanagedJars ++= sparkJars(_ => true).classpath,
    assembly / assemblyJarName := s"sparklance-${version.value}.jar",
    assembly / assemblyShadeRules := Seq(
      ShadeRule.rename("com.google.protobuf.**" -> "io.sparklance.shaded.protobuf.@1").inAll),
    // Spark's own jars are provided by the cluster; the runtime jar carries only sparklance and protobuf.
    assembly / assemblyExcludedJars := {
      val spark = sparkJarsDir.getAbsolutePath + java.io.File.separator
      (assembly / fullClasspath).value.filter(_.data.getAbsolutePath.startsWith(spark))
    },
    assembly / assemblyOption ~= (_.withIncludeScala(false)),
    assembly / assemblyMergeStrategy := {
      case PathList("META-INF", "services", _*) => MergeStrategy.concat
      case PathList("META-INF", _*) => MergeStrategy.discard
      case "module-info.class" => MergeStrategy.discard
      case _ => MergeStrategy.first
    },
  )

// Benchmarks (make bench): separate from tests and from the runtime jar.
lazy val bench = (project in file("jvm/bench"))
  .dependsOn(core)
  .settings(
    name := "sparklance-bench",
    publish / skip := true,
    Compile / unmanagedJars ++= sparkJars(n => coreJarPrefixes.exists(n.startsWith)).classpath,
    run / fork := true,
    run / javaOptions ++= javaModuleOpens ++ Seq("-Xmx6g", "-Xss4m"),
  )

// The S3 jars alone, for tests and the demo that run Spark against an S3 stand-in (make s3-jars exports this
// project's classpath to build/s3-classpath.txt). Nothing of it goes into the runtime jar.
lazy val s3deps = (project in file("jvm/s3deps"))
  .settings(
    name := "sparklance-s3deps",
    publish / skip := true,
    libraryDependencies ++= awsDeps,
  )

lazy val root = (project in file("."))
  .aggregate(core, spark, bench)
  .settings(name := "sparklance", publish / skip := true)
