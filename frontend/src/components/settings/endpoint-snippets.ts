import type { NewAccessKey } from "@/api/keys";

export interface EndpointSnippet {
  id: "aws" | "s3cmd" | "rclone" | "boto3";
  title: string;
  code: string;
}

/**
 * Commands that list your buckets through the gateway, for the clients `make setup` installs. Each names
 * the endpoint on its own command line: Debian's AWS CLI 2.9 ignores AWS_ENDPOINT_URL and would go to AWS.
 * tests/e2e/test_snippets.py runs every one of them as shown.
 */
export function endpointSnippets(key: NewAccessKey, region = "us-east-1"): EndpointSnippet[] {
  const url = key.gateway_url.replace(/\/$/, "");
  const host = url.replace(/^https?:\/\//, "");
  const ssl = url.startsWith("https") ? "" : " --no-ssl";
  const env = [
    `export AWS_ACCESS_KEY_ID=${key.access_key_id}`,
    `export AWS_SECRET_ACCESS_KEY=${key.secret_access_key}`,
    `export AWS_DEFAULT_REGION=${region}`,
  ];
  return [
    {
      id: "aws",
      title: "AWS CLI (v1 and v2: --endpoint-url on every command)",
      code: [...env, `aws --endpoint-url ${url} s3 ls`].join("\n"),
    },
    {
      id: "s3cmd",
      title: "s3cmd",
      code: `s3cmd --access_key=${key.access_key_id} --secret_key=${key.secret_access_key} \\\n  --host=${host} --host-bucket=${host}${ssl} ls`,
    },
    {
      id: "rclone",
      title: "rclone (no config file needed)",
      code: `rclone lsd --s3-provider Other --s3-access-key-id ${key.access_key_id} \\\n  --s3-secret-access-key ${key.secret_access_key} --s3-endpoint ${url} :s3:`,
    },
    {
      id: "boto3",
      title: "Python (boto3)",
      code: [
        ...env,
        `python3 -c 'import boto3; print([b["Name"] for b in boto3.client("s3", endpoint_url="${url}").list_buckets()["Buckets"]])'`,
      ].join("\n"),
    },
  ];
}
