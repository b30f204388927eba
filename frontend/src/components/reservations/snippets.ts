import type { Reservation } from "@/api/reservations";

export interface Snippet {
  id: string;
  title: string;
  code: string;
}

/** Ready-to-run client commands that send the reservation header with every request
 * (credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, as each tool reads them). */
export function clientSnippets(
  r: Pick<Reservation, "id" | "bucket" | "direction">,
  gatewayUrl: string,
): Snippet[] {
  const header = `X-Tierpilot-Reservation: ${r.id}`;
  const read = r.direction === "read";
  const host = gatewayUrl.replace(/^https?:\/\//, "").replace(/\/$/, "");
  const ssl = gatewayUrl.startsWith("https") ? "" : " --no-ssl";
  return [
    {
      id: "boto3",
      title: "Python (boto3, an event hook adds the header)",
      code: [
        "import boto3",
        "",
        `s3 = boto3.client("s3", endpoint_url="${gatewayUrl}")`,
        "",
        "def add_reservation(params, **kwargs):",
        `    params["headers"]["X-Tierpilot-Reservation"] = "${r.id}"`,
        "",
        's3.meta.events.register("before-call.s3", add_reservation)',
        read
          ? `s3.download_file("${r.bucket}", "path/to/object", "object")`
          : `s3.upload_file("local-file", "${r.bucket}", "path/to/object")`,
      ].join("\n"),
    },
    {
      id: "rclone",
      title: "rclone",
      // --header, not --header-upload: rclone's S3 backend keeps only metadata headers from the latter
      code: read
        ? `rclone copy --s3-provider Other --s3-env-auth --s3-endpoint ${gatewayUrl} \\\n  --header "${header}" :s3:${r.bucket}/path ./local`
        : `rclone copy --s3-provider Other --s3-env-auth --s3-endpoint ${gatewayUrl} \\\n  --header "${header}" ./local :s3:${r.bucket}/path`,
    },
    {
      id: "s3cmd",
      title: "s3cmd",
      // s3cmd adds headers to uploads only, and not to the parts of a multipart upload
      code: read
        ? "# s3cmd cannot send a header with downloads: use rclone, boto3 or tierpilot cp for this reservation"
        : `s3cmd --host=${host} --host-bucket=${host}${ssl} --disable-multipart \\\n  --add-header="${header}" put local-file s3://${r.bucket}/path/to/object`,
    },
    {
      id: "tierpilot",
      title: "tierpilot cp (parallel, with progress)",
      code: read
        ? `tierpilot cp --endpoint ${gatewayUrl} --reservation ${r.id} -r s3://${r.bucket}/path ./local`
        : `tierpilot cp --endpoint ${gatewayUrl} --reservation ${r.id} -r ./local s3://${r.bucket}/path`,
    },
  ];
}
