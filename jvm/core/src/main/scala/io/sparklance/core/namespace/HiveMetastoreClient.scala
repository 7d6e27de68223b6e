package io.sparklance.core.namespace

import java.io.{BufferedInputStream, BufferedOutputStream, DataInputStream, DataOutputStream, IOException}
import java.net.{InetSocketAddress, Socket, URI}
import java.nio.charset.StandardCharsets.UTF_8

import io.sparklance.core.{InvalidArgumentException, StorageException}

/**
 * A client of a Hive Metastore's Thrift service (`ThriftHiveMetastore` in Hive's hive_metastore.thrift), speaking
 * Thrift's strict binary protocol over a plain socket, as a metastore without SASL or framing serves it, so that no
 * Hive or Thrift jar is needed. Values travel as [[HiveMetastoreClient.Value]]s, which keep their wire types, so a
 * struct read (a `Table`) can be changed and written back without a schema of every field.
 *
 * Each call opens a connection (after `set_ugi` when a user is given) and closes it; a metastore that cannot be
 * reached is a [[StorageException]] naming its URI and the call.
 */
private[namespace] final class HiveMetastoreClient(val uri: URI, ugi: Option[(String, Seq[String])]) {
  import HiveMetastoreClient._

  private val host = Option(uri.getHost).getOrElse(throw new InvalidArgumentException(s"Hive Metastore URI '$uri' " +
    "names no host: give it as thrift://<host>:<port>."))
  private val port = if (uri.getPort == -1) 9083 else uri.getPort

  /**
   * Calls `method` with `args` (field id to value); its result: `Right(success)` (None for a void method) or
   * `Left((id, message))`, the id of the declared exception the metastore threw and its message.
   */
  def call(method: String, args: (Short, Value)*): Either[(Int, String), Option[Value]] = {
    val socket = new Socket()
    try {
      socket.connect(new InetSocketAddress(host, port), TimeoutMillis)
      socket.setSoTimeout(TimeoutMillis)
      val out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream))
      val in = new DataInputStream(new BufferedInputStream(socket.getInputStream))
      ugi.foreach { case (user, groups) =>
        send(out, "set_ugi", Seq(1.toShort -> Text(user), 2.toShort -> ListOf(TString, groups.map(Text(_)))))
        receive(in, "set_ugi")
      }
      send(out, method, args)
      receive(in, method)
    } catch {
      case e: java.io.EOFException => throw new StorageException(uri.toString, s"call $method of the Hive Metastore at",
        new IOException("the metastore closed the connection without an answer; a metastore with SASL " +
          "(hive.metastore.sasl.enabled, Kerberos) does so, and is not supported: use one without SASL", e))
      case e: IOException => throw new StorageException(uri.toString, s"call $method of the Hive Metastore at", e)
    } finally socket.close()
  }

  private def send(out: DataOutputStream, method: String, args: Seq[(Short, Value)]): Unit = {
    out.writeInt(Version1 | Call)
    writeString(out, method.getBytes(UTF_8))
    out.writeInt(0)
    write(out, Struct(args))
    out.flush()
  }

  private def receive(in: DataInputStream, method: String): Either[(Int, String), Option[Value]] = {
    val header = in.readInt()
    if ((header & VersionMask) != Version1) throw new IOException(s"the answer to $method is not Thrift's strict " +
      f"binary protocol (header 0x$header%08x): is it a Hive Metastore? One with SASL (hive.metastore.sasl.enabled, " +
      "Kerberos) answers a plain call with a SASL frame, and is not supported: use one without SASL")
    readBytes(in)
    in.readInt()
    val result = read(in, TStruct, 0).asInstanceOf[Struct]
    (header & 0xff) match {
      case Reply => result.fields.find(_._1 == 0) match {
        case Some((_, v)) => Right(Some(v))
        case None => result.fields.headOption match {
          case Some((id, e: Struct)) => Left(id.toInt -> e.text(1).getOrElse(""))
          case _ => Right(None)
        }
      }
      case Exception =>
        throw new ApplicationException(method, result.text(1).getOrElse(""), result.int(2).getOrElse(0))
      case other => throw new IOException(s"the metastore answered $method with message type $other")
    }
  }
}

private[namespace] object HiveMetastoreClient {

  private val TimeoutMillis = 60000
  private val Version1 = 0x80010000
  private val VersionMask = 0xffff0000
  private val Call = 1
  private val Reply = 2
  private val Exception = 3
  /** Longest string or container the client accepts from the wire: an answer past it is refused, not allocated. */
  private val MaxLength = 64 << 20
  private val MaxDepth = 64

  // Thrift's wire types.
  val TBool: Byte = 2
  val TByte: Byte = 3
  val TDouble: Byte = 4
  val TI16: Byte = 6
  val TI32: Byte = 8
  val TI64: Byte = 10
  val TString: Byte = 11
  val TStruct: Byte = 12
  val TMap: Byte = 13
  val TSet: Byte = 14
  val TList: Byte = 15

  /** A Thrift value with its wire type. */
  sealed trait Value { def wireType: Byte }
  final case class Bool(v: Boolean) extends Value { def wireType: Byte = TBool }
  final case class I8(v: Byte) extends Value { def wireType: Byte = TByte }
  final case class I16(v: Short) extends Value { def wireType: Byte = TI16 }
  final case class I32(v: Int) extends Value { def wireType: Byte = TI32 }
  final case class I64(v: Long) extends Value { def wireType: Byte = TI64 }
  final case class Dbl(v: Double) extends Value { def wireType: Byte = TDouble }
  /** A string or binary, as its bytes. */
  final case class Bin(bytes: Seq[Byte]) extends Value {
    def wireType: Byte = TString
    def text: String = new String(bytes.toArray, UTF_8)
  }
  final case class ListOf(elementType: Byte, items: Seq[Value], isSet: Boolean = false) extends Value {
    def wireType: Byte = if (isSet) TSet else TList
  }
  final case class MapOf(keyType: Byte, valueType: Byte, entries: Seq[(Value, Value)]) extends Value {
    def wireType: Byte = TMap
  }
  /** A struct: its fields by id, in the order read or given. */
  final case class Struct(fields: Seq[(Short, Value)]) extends Value {
    def wireType: Byte = TStruct
    def field(id: Int): Option[Value] = fields.collectFirst { case (i, v) if i == id => v }
    def text(id: Int): Option[String] = field(id).collect { case b: Bin => b.text }
    def int(id: Int): Option[Int] = field(id).collect { case I32(v) => v }
    def struct(id: Int): Option[Struct] = field(id).collect { case s: Struct => s }
    /** A `map<string,string>` field. */
    def textMap(id: Int): Map[String, String] = field(id).collect { case m: MapOf =>
      m.entries.collect { case (k: Bin, v: Bin) => k.text -> v.text }.toMap }.getOrElse(Map.empty)
    /** This struct with field `id` set to `value` (replaced where it was, else added). */
    def updated(id: Int, value: Value): Struct =
      if (field(id).isDefined) Struct(fields.map { case (i, v) => if (i == id) (i, value) else (i, v) })
      else Struct(fields :+ (id.toShort -> value))
  }

  def Text(s: String): Bin = Bin(s.getBytes(UTF_8).toSeq)

  def TextMap(m: Map[String, String]): MapOf =
    MapOf(TString, TString, m.toSeq.sortBy(_._1).map { case (k, v) => (Text(k), Text(v)) })

  /** The metastore failed a call with an error it did not declare (e.g. a method it does not have). */
  final class ApplicationException(val method: String, message: String, val kind: Int)
      extends RuntimeException(s"$method: $message")

  /** Thrift's TApplicationException type of a method the server does not know. */
  val UnknownMethod = 1

  private def writeString(out: DataOutputStream, bytes: Array[Byte]): Unit = {
    out.writeInt(bytes.length)
    out.write(bytes)
  }

  private def write(out: DataOutputStream, value: Value): Unit = value match {
    case Bool(v) => out.writeByte(if (v) 1 else 0)
    case I8(v) => out.writeByte(v)
    case I16(v) => out.writeShort(v)
    case I32(v) => out.writeInt(v)
    case I64(v) => out.writeLong(v)
    case Dbl(v) => out.writeDouble(v)
    case b: Bin => writeString(out, b.bytes.toArray)
    case l: ListOf =>
      out.writeByte(l.elementType)
      out.writeInt(l.items.size)
      l.items.foreach(write(out, _))
    case m: MapOf =>
      out.writeByte(m.keyType)
      out.writeByte(m.valueType)
      out.writeInt(m.entries.size)
      m.entries.foreach { case (k, v) => write(out, k); write(out, v) }
    case Struct(fields) =>
      fields.foreach { case (id, v) =>
        out.writeByte(v.wireType)
        out.writeShort(id)
        write(out, v)
      }
      out.writeByte(0)
  }

  private def length(in: DataInputStream): Int = {
    val n = in.readInt()
    if (n < 0 || n > MaxLength) throw new IOException(s"the metastore's answer holds a length of $n, out of range")
    n
  }

  private def readBytes(in: DataInputStream): Array[Byte] = {
    val bytes = new Array[Byte](length(in))
    in.readFully(bytes)
    bytes
  }

  private def read(in: DataInputStream, wireType: Byte, depth: Int): Value = {
    if (depth > MaxDepth) throw new IOException("the metastore's answer nests deeper than this client reads")
    wireType match {
      case TBool => Bool(in.readByte() != 0)
      case TByte => I8(in.readByte())
      case TI16 => I16(in.readShort())
      case TI32 => I32(in.readInt())
      case TI64 => I64(in.readLong())
      case TDouble => Dbl(in.readDouble())
      case TString => Bin(readBytes(in).toSeq)
      case TList | TSet =>
        val element = in.readByte()
        val n = length(in)
        ListOf(element, (0 until n).map(_ => read(in, element, depth + 1)), isSet = wireType == TSet)
      case TMap =>
        val (k, v) = (in.readByte(), in.readByte())
        val n = length(in)
        MapOf(k, v, (0 until n).map(_ => (read(in, k, depth + 1), read(in, v, depth + 1))))
      case TStruct =>
        val fields = Seq.newBuilder[(Short, Value)]
        var t = in.readByte()
        while (t != 0) {
          val id = in.readShort()
          fields += id -> read(in, t, depth + 1)
          t = in.readByte()
        }
        Struct(fields.result())
      case other => throw new IOException(s"the metastore's answer holds unknown Thrift type $other")
    }
  }
}
