import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A small Cloud-OpsBench-shaped case written for the tests (no benchmark data): namespace `shop`, apps
 * `checkout` (its new pod Pending on a taint) and `cart` (running, its Service's targetPort wrong),
 * nodes `node-a` and `node-b` (kubelet stopped on node-b), a pods quota, alerts, metrics and logs.
 * Texts are aligned as kubectl aligns them.
 */

export const DESCRIBE_CHECKOUT_POD = `Name:             checkout-5d8f7c9b6d-x2k4p
Namespace:        shop
Priority:         0
Service Account:  checkout
Node:             <none>
Labels:           app=checkout
                  pod-template-hash=5d8f7c9b6d
Annotations:      <none>
Status:           Pending
IP:               
IPs:              <none>
Controlled By:    ReplicaSet/checkout-5d8f7c9b6d
Containers:
  app:
    Image:      registry.example/checkout:1.4.2
    Port:       8080/TCP
    Host Port:  0/TCP
    Limits:
      cpu:     500m
      memory:  256Mi
    Requests:
      cpu:        250m
      memory:     128Mi
    Liveness:     http-get http://:8080/healthz delay=10s timeout=2s period=15s #success=1 #failure=3
    Readiness:    tcp-socket :8080 delay=5s timeout=1s period=10s #success=1 #failure=3
    Environment:
      CART_ADDR:   cart:7070
      LOG_LEVEL:   <set to the key 'level' of config map 'checkout-config'>  Optional: false
      API_TOKEN:   <set to the key 'token' in secret 'checkout-secrets'>  Optional: true
    Mounts:
      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-abcde (ro)
      /data from cache (rw)
Conditions:
  Type           Status
  PodScheduled   False 
Volumes:
  cache:
    Type:       PersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)
    ClaimName:  checkout-cache
    ReadOnly:   false
  kube-api-access-abcde:
    Type:                    Projected (a volume that contains injected data from multiple sources)
    TokenExpirationSeconds:  3607
QoS Class:                   Burstable
Node-Selectors:              disktype=ssd
Tolerations:                 dedicated=batch:NoSchedule
                             node.kubernetes.io/not-ready:NoExecute op=Exists for 300s
Events:
  Type     Reason            Age                From               Message
  ----     ------            ----               ----               -------
  Warning  FailedScheduling  20s (x3 over 2m)   default-scheduler  0/2 nodes are available: 1 node(s) had untolerated taint {gpu: true}, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.
`;

export const DESCRIBE_CART_POD = `Name:             cart-7c9d8b6f5a-q8w2e
Namespace:        shop
Priority:         0
Service Account:  default
Node:             node-a/10.0.0.11
Start Time:       Mon, 02 Mar 2026 09:58:00 +0100
Labels:           app=cart
                  pod-template-hash=7c9d8b6f5a
Annotations:      <none>
Status:           Running
IP:               10.244.1.7
IPs:
  IP:           10.244.1.7
Controlled By:  ReplicaSet/cart-7c9d8b6f5a
Containers:
  server:
    Container ID:   containerd://0123
    Image:          registry.example/cart:2.0.0
    Image ID:       registry.example/cart@sha256:0123
    Port:           7070/TCP
    Host Port:      0/TCP
    State:          Running
      Started:      Mon, 02 Mar 2026 09:59:30 +0100
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
      Started:      Mon, 02 Mar 2026 09:58:05 +0100
      Finished:     Mon, 02 Mar 2026 09:59:28 +0100
    Ready:          True
    Restart Count:  1
    Limits:
      memory:  64Mi
    Requests:
      memory:   32Mi
    Liveness:   grpc <pod>:7070  delay=5s timeout=1s period=10s #success=1 #failure=3
    Readiness:  exec [cat /tmp/ready] delay=0s timeout=1s period=5s #success=1 #failure=3
    Environment:  <none>
    Mounts:       <none>
Conditions:
  Type                        Status
  PodReadyToStartContainers   True 
  Initialized                 True 
  Ready                       True 
  ContainersReady             True 
  PodScheduled                True 
Volumes:                      <none>
QoS Class:                    Burstable
Node-Selectors:               <none>
Tolerations:                  op=Exists
Events:
  Type     Reason     Age   From               Message
  ----     ------     ----  ----               -------
  Normal   Scheduled  2m    default-scheduler  Successfully assigned shop/cart-7c9d8b6f5a-q8w2e to node-a
  Warning  OOMKilling  35s  kubelet            Memory cgroup out of memory: Killed process 4242 (cart)
`;

export const GET_PODS_WIDE = `NAME                        READY   STATUS             RESTARTS      AGE    IP           NODE     NOMINATED NODE   READINESS GATES
cart-7c9d8b6f5a-q8w2e       1/1     Running            1 (35s ago)   2m     10.244.1.7   node-a   <none>           <none>
checkout-5d8f7c9b6d-x2k4p   0/1     Pending            0             2m5s   <none>       <none>   <none>           <none>
checkout-6b7c8d9e0f-old99   0/1     CrashLoopBackOff   4             9m     10.244.1.9   node-a   <none>           <none>
`;

export const DESCRIBE_CART_SERVICE = `Name:                     cart
Namespace:                shop
Labels:                   app=cart
Annotations:              <none>
Selector:                 app=cart
Type:                     ClusterIP
IP Family Policy:         SingleStack
IP Families:              IPv4
IP:                       10.96.0.20
IPs:                      10.96.0.20
Port:                     grpc  7070/TCP
TargetPort:               7071/TCP
Endpoints:                10.244.1.7:7071
Port:                     <unset>  9090/UDP
TargetPort:               metrics/UDP
Endpoints:                
Session Affinity:         None
Events:                   <none>
`;

export const DESCRIBE_CART_ENDPOINTS = `Name:         cart
Namespace:    shop
Labels:       app=cart
Annotations:  <none>
Subsets:
  Addresses:          10.244.1.7
  NotReadyAddresses:  10.244.1.9
  Ports:
    Name  Port  Protocol
    ----  ----  --------
    grpc  7071  TCP

Events:  <none>
`;

export const DESCRIBE_NODE_B = `Name:               node-b
Roles:              <none>
Labels:             kubernetes.io/hostname=node-b
                    gpu=true
Annotations:        node.alpha.kubernetes.io/ttl: 0
CreationTimestamp:  Sun, 01 Feb 2026 10:00:00 +0100
Taints:             gpu=true:NoSchedule
                    node.kubernetes.io/unreachable:NoExecute
Unschedulable:      true
Conditions:
  Type             Status    LastHeartbeatTime                 LastTransitionTime                Reason              Message
  ----             ------    -----------------                 ------------------                ------              -------
  MemoryPressure   Unknown   Mon, 02 Mar 2026 09:55:00 +0100   Mon, 02 Mar 2026 09:57:00 +0100   NodeStatusUnknown   Kubelet stopped posting node status.
  Ready            Unknown   Mon, 02 Mar 2026 09:55:00 +0100   Mon, 02 Mar 2026 09:57:00 +0100   NodeStatusUnknown   Kubelet stopped posting node status.
Addresses:
  InternalIP:  10.0.0.12
Capacity:
  cpu:     4
  memory:  8145312Ki
  pods:    110
Allocatable:
  cpu:     3800m
  memory:  7942560Ki
  pods:    110
Events:
  Type     Reason        Age   From             Message
  ----     ------        ----  ----             -------
  Normal   NodeNotReady  3m    node-controller  Node node-b status is now: NodeNotReady
`;

export const GET_NODES = `NAME     STATUS                        ROLES    AGE   VERSION
node-a   Ready                         <none>   30d   v1.31.2
node-b   NotReady,SchedulingDisabled   <none>   30d   v1.31.2
`;

export const DESCRIBE_QUOTA = `Name:       pods-quota
Namespace:  shop
Resource      Used  Hard
--------      ----  ----
pods          3     3
requests.cpu  750m  2
`;

export const DESCRIBE_CLAIM = `Name:          checkout-cache
Namespace:     shop
StorageClass:  fast
Status:        Pending
Volume:        
Labels:        <none>
Annotations:   <none>
Capacity:      
Access Modes:  
VolumeMode:    Filesystem
Used By:       checkout-5d8f7c9b6d-x2k4p
Events:
  Type     Reason              Age                 From                         Message
  ----     ------              ----                ----                         -------
  Warning  ProvisioningFailed  10s (x8 over 2m)    persistentvolume-controller  storageclass.storage.k8s.io "fast" not found
`;

export const DESCRIBE_VOLUME = `Name:            shared-pv
Labels:          tier=cache
Annotations:     <none>
Finalizers:      [kubernetes.io/pv-protection]
StorageClass:    
Status:          Bound
Claim:           other/shared-claim
Reclaim Policy:  Retain
Access Modes:    RWO,ROX
VolumeMode:      Filesystem
Capacity:        2Gi
Node Affinity:   <none>
Message:         
Source:
    Type:          HostPath (bare host directory volume)
    Path:          /mnt/shared
Events:            <none>
`;

export const GET_STORAGE_CLASSES = `NAME                 PROVISIONER                    RECLAIMPOLICY   VOLUMEBINDINGMODE      ALLOWVOLUMEEXPANSION   AGE
standard (default)   kubernetes.io/no-provisioner   Delete          WaitForFirstConsumer   false                  30d
`;

export const GET_DEPLOYMENTS = `NAME       READY   UP-TO-DATE   AVAILABLE   AGE
cart       1/1     1            1           2m
checkout   0/1     1            0           9m
`;

export const DESCRIBE_CHECKOUT_DEPLOYMENT = `Name:                   checkout
Namespace:              shop
CreationTimestamp:      Mon, 02 Mar 2026 09:51:00 +0100
Labels:                 app=checkout
Annotations:            deployment.kubernetes.io/revision: 2
Selector:               app=checkout
Replicas:               1 desired | 1 updated | 2 total | 0 available | 2 unavailable
StrategyType:           RollingUpdate
Pod Template:
  Labels:           app=checkout
  Service Account:  checkout
  Containers:
   app:
    Image:      registry.example/checkout:1.4.2
    Port:       8080/TCP
    Host Port:  0/TCP
    Environment:
      CART_ADDR:  cart:7070
    Mounts:       <none>
  Volumes:        <none>
  Node-Selectors:  disktype=ssd
  Tolerations:     <none>
Conditions:
  Type           Status  Reason
  ----           ------  ------
  Available      False   MinimumReplicasUnavailable
  Progressing    True    ReplicaSetUpdated
OldReplicaSets:  checkout-6b7c8d9e0f (1/1 replicas created)
NewReplicaSet:   checkout-5d8f7c9b6d (1/1 replicas created)
Events:
  Type    Reason             Age   From                   Message
  ----    ------             ----  ----                   -------
  Normal  ScalingReplicaSet  2m5s  deployment-controller  Scaled up replica set checkout-5d8f7c9b6d to 1
`;

export const DESCRIBE_CHECKOUT_REPLICASET = `Name:           checkout-5d8f7c9b6d
Namespace:      shop
Selector:       app=checkout,pod-template-hash=5d8f7c9b6d
Labels:         app=checkout
                pod-template-hash=5d8f7c9b6d
Annotations:    deployment.kubernetes.io/revision: 2
Controlled By:  Deployment/checkout
Replicas:       1 current / 1 desired
Pods Status:    0 Running / 1 Waiting / 0 Succeeded / 0 Failed
Pod Template:
  Labels:           app=checkout
                    pod-template-hash=5d8f7c9b6d
  Service Account:  checkout
  Containers:
   app:
    Image:      registry.example/checkout:1.4.2
    Port:       8080/TCP
    Host Port:  0/TCP
    Environment:  <none>
    Mounts:       <none>
  Volumes:        <none>
Events:
  Type     Reason            Age   From                   Message
  ----     ------            ----  ----                   -------
  Warning  FailedCreate      3m    replicaset-controller  Error creating: pods "checkout-5d8f7c9b6d-" is forbidden: exceeded quota: pods-quota, requested: pods=1, used: pods=3, limited: pods=3
  Normal   SuccessfulCreate  2m5s  replicaset-controller  Created pod: checkout-5d8f7c9b6d-x2k4p
`;

/** Listed with `| tail -n 20`: no header. */
export const GET_EVENTS = `3m          Warning   FailedCreate        replicaset/checkout-5d8f7c9b6d   Error creating: pods "checkout-5d8f7c9b6d-" is forbidden: exceeded quota: pods-quota, requested: pods=1, used: pods=3, limited: pods=3
2m          Normal    Scheduled           pod/cart-7c9d8b6f5a-q8w2e         Successfully assigned shop/cart-7c9d8b6f5a-q8w2e to node-a
20s (x3 over 2m)   Warning   FailedScheduling    pod/checkout-5d8f7c9b6d-x2k4p   0/2 nodes are available: 1 node(s) had untolerated taint {gpu: true}, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.
`;

export const DEFAULT_EVENTS = `3m          Normal    NodeNotReady        node/node-b   Node node-b status is now: NodeNotReady
`;

export const CHECKOUT_YAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
  namespace: shop
  labels:
    app: checkout
spec:
  replicas: 1
  selector:
    matchLabels:
      app: checkout
  template:
    metadata:
      labels:
        app: checkout
        version: 2
    spec:
      serviceAccountName: checkout
      nodeSelector:
        disktype: ssd
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: zone
                operator: In
                values: [1, 2]
      tolerations:
      - key: dedicated
        operator: Equal
        value: batch
        effect: NoSchedule
      imagePullSecrets:
      - name: registry-creds
      containers:
      - name: app
        image: registry.example/checkout:1.4.2
        ports:
        - name: http
          containerPort: 8080
        env:
        - name: CART_ADDR
          value: "cart:7070"
        - name: WORKERS
          value: 4
        resources:
          requests:
            cpu: 250m
            memory: 128Mi
          limits:
            cpu: 0.5
            memory: 256Mi
        livenessProbe:
          httpGet:
            path: /healthz
            port: 8080
          initialDelaySeconds: 10
      volumes:
      - name: cache
        persistentVolumeClaim:
          claimName: checkout-cache
---
apiVersion: v1
kind: Service
metadata:
  name: checkout
  namespace: shop
spec:
  selector:
    app: checkout
  ports:
  - name: http
    port: 80
    targetPort: http
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: checkout-cache
  namespace: shop
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  selector:
    matchLabels:
      tier: cache
  resources:
    requests:
      storage: 1Gi
`;

export const CART_YAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: cart
  namespace: shop
spec:
  selector:
    matchLabels:
      app: cart
  template:
    metadata:
      labels:
        app: cart
    spec:
      containers:
      - name: server
        image: registry.example/cart:2.0.0
        ports:
        - name: grpc
          containerPort: 7070
        resources:
          limits:
            cpu: 200m
            memory: 64Mi
---
apiVersion: v1
kind: Service
metadata:
  name: cart
  namespace: shop
spec:
  selector:
    app: cart
  ports:
  - name: grpc
    port: 7070
    targetPort: 7071
---
apiVersion: v1
kind: Service
metadata:
  name: cart-refused
  namespace: shop
spec:
  selector:
    app: cart
  ports:
  - port: 7070
`;

export const GET_SERVICES = `NAME       TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)             AGE
cart       ClusterIP   10.96.0.20   <none>        7070/TCP,9090/UDP   2m
checkout   ClusterIP   10.96.0.21   <none>        80/TCP              9m
`;

export const KUBELET_STOPPED = `Service: kubelet
Node: node-b
Status: ○ kubelet.service - Kubernetes Kubelet
     Loaded: loaded (/etc/systemd/system/kubelet.service; enabled; vendor preset: enabled)
     Active: inactive (dead) since Mon 2026-03-02 09:56:40 CET; 3min 20s ago
   Main PID: 812 (code=exited, status=0/SUCCESS)

Mar 02 09:56:40 node-b systemd[1]: Stopping Kubernetes Kubelet...
Mar 02 09:56:40 node-b systemd[1]: kubelet.service: Deactivated successfully.
`;

export const CONTAINERD_RUNNING = `Service: containerd
Node: node-a
Status: ● containerd.service - containerd container runtime
     Active: active (running) since Mon 2026-03-02 08:00:00 CET; 2h ago
`;

export const ALERTS = {
  status: "has_anomalies",
  alert_count: 2,
  alerts: [
    {
      type: "Service",
      name: "cart",
      time_range: "2026-03-02 09:57:00 ~ 2026-03-02 09:59:00",
      status: "ABNORMAL",
      evidence: [
        "LATENCY_DEGRADATION [Slow Response] | cart-p90latency: Normal=5.00ms -> Current=90.00ms (+1700.0%)",
        "THROUGHPUT_DROP [RPS] | Normal=10req/s -> Current=2req/s (-80.0%)",
      ],
    },
    {
      type: "Node",
      name: "node-b",
      time_range: "2026-03-02 09:57:00 ~ 2026-03-02 09:59:00",
      status: "ABNORMAL",
      evidence: ["NETWORK_QUALITY_DEGRADED [TCP Retransmission] | Normal=0.00retrans -> Current=0.90retrans (New Spike)"],
    },
  ],
};

export const METRICS_CSV = `\uFEFFtime,cart-cpu,cart-mem,cart-p90latency,node-b-tcp_retans
2026-03-02 09:56:00,0.05,30000000.0,5.1,0.0
2026-03-02 09:57:00,0.19,31000000.0,,0.4
2026-03-02 09:58:00,0.2,32000000.0,90.0,0.9
`;

export const LOGS = { cart: ["starting cart", "listening on :7071"], checkout: [], ghost: ["a service without pods"] };

/** Writes the case under `directory` (`<directory>/raw_data/…`, `tool_cache.json`, `metadata.json`). */
export function writeSyntheticCase(directory: string, options: { answer?: Record<string, string> } = {}): void {
  mkdirSync(join(directory, "raw_data"), { recursive: true });
  const states: Record<string, string> = {
    "kubectl get pods -n shop -o wide": GET_PODS_WIDE,
    "kubectl describe pods checkout-5d8f7c9b6d-x2k4p -n shop": DESCRIBE_CHECKOUT_POD,
    "kubectl describe pods cart-7c9d8b6f5a-q8w2e -n shop": DESCRIBE_CART_POD,
    "kubectl get pods cart-7c9d8b6f5a-q8w2e -n shop --show-labels": "ignored",
    "kubectl get services -n shop": GET_SERVICES,
    "kubectl describe services cart -n shop": DESCRIBE_CART_SERVICE,
    "kubectl describe endpoints cart -n shop": DESCRIBE_CART_ENDPOINTS,
    "kubectl get deployments -n shop": GET_DEPLOYMENTS,
    "kubectl describe deployments checkout -n shop": DESCRIBE_CHECKOUT_DEPLOYMENT,
    "kubectl describe replicasets checkout-5d8f7c9b6d -n shop": DESCRIBE_CHECKOUT_REPLICASET,
    "kubectl get nodes -n shop": GET_NODES,
    "kubectl describe resourcequota pods-quota -n shop": DESCRIBE_QUOTA,
    "kubectl describe persistentvolumeclaims checkout-cache -n shop": DESCRIBE_CLAIM,
    "kubectl get storageclasses -n shop": GET_STORAGE_CLASSES,
    "kubectl get serviceaccounts -n shop": "NAME       SECRETS   AGE\ncheckout   0         9m\ndefault    0         30d\n",
    "kubectl get secrets -n shop": "",
    "kubectl get events -n shop --sort-by='.lastTimestamp' | tail -n 20": GET_EVENTS,
    "kubectl get events -n default --sort-by='.lastTimestamp' | tail -n 20": DEFAULT_EVENTS,
  };
  const cache: Record<string, unknown> = {
    'DescribeResource:{"resource_type":"nodes","name":"node-b","namespace":"shop"}': DESCRIBE_NODE_B,
    'DescribeResource:{"resource_type":"persistentvolumes","name":"shared-pv","namespace":"shop"}': DESCRIBE_VOLUME,
    'GetAppYAML:{"app_name":"checkout"}': CHECKOUT_YAML,
    'GetAppYAML:{"app_name":"cart"}': CART_YAML,
    'CheckNodeServiceStatus:{"node_name":"node-b","service_name":"kubelet"}': KUBELET_STOPPED,
    'CheckNodeServiceStatus:{"node_name":"node-a","service_name":"containerd"}': CONTAINERD_RUNNING,
    "GetAlerts:{}": {},
    collection_timestamp: "2026-03-02T10:00:00.123456",
  };
  writeFileSync(join(directory, "raw_data", "k8s_states.json"), JSON.stringify(states));
  writeFileSync(join(directory, "tool_cache.json"), JSON.stringify(cache));
  writeFileSync(join(directory, "raw_data", "logs.json"), JSON.stringify(LOGS));
  writeFileSync(join(directory, "raw_data", "alert.json"), JSON.stringify(ALERTS));
  writeFileSync(join(directory, "raw_data", "metrics.csv"), METRICS_CSV);
  writeFileSync(join(directory, "metadata.json"), JSON.stringify({ namespace: "shop", query: "Checkout is down.", result: options.answer ?? {} }));
}
